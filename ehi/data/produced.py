"""Folders a dataset names that the DAG makes itself: collections, encodings, worlds and towers.

A config's ``dataset.path`` (and ``encoder.name``, for the identity tower over vectors) may name a
folder that a rule writes rather than one made by hand:

- ``collections: {name: {script: build.py}}``: rule ``build_collection`` runs the script into
  ``resources/sources/<name>/`` (a BEIR folder), as ``../shared/data/webster/build.py`` builds webster;
- ``encodings: {name: {collection: DIR, encoder: MODEL, max_length: N}}``: rule
  ``encode_collection`` encodes a text collection once into ``resources/vectors/<name>/`` (the
  embeddings layout, :mod:`ehi.model.encode_collection`);
- ``worlds: {name: {n_docs: 10000, query_noise: 2.1, ...}}``: rule ``vector_world`` writes the
  synthetic vector world of those :class:`~ehi.data.vector_world.WorldConfig` knobs into
  ``resources/worlds/<name>/`` (an embeddings folder, and its own identity tower);
- ``towers: {name: {vectors: DIR, kind: linear}}``: rule ``write_tower`` writes
  ``resources/towers/<name>/tower.json``, a tower over those vectors at its start, which
  ``encoder.name`` then names (:func:`ehi.model.tower.write_tower_spec`).

:func:`produced_inputs` gives the rule outputs a dataset's preparation waits for, so a fresh clone
plans the whole chain (build, encode, prepare, ...) as jobs of one DAG.
"""

from __future__ import annotations

import os
from pathlib import Path

from ehi.core.catalog import PRODUCED_ROOTS, produced_folder
from ehi.core.catalog import produced_output as entry_output

DEFAULT_ENCODER = "all-MiniLM-L6-v2"  # the schema's default of an encodings entry's encoder


def _norm(path) -> str:
    return os.path.normpath(str(path)) if path else ""


def produced_folders(config: dict) -> dict[str, tuple[str, str]]:
    """{folder: (config key, entry name)} of every folder the config's producers write, each folder
    the catalog's for its entry (a table built from the names, looked up by the folder a dataset
    gives)."""
    return {produced_folder(key, name): (key, name) for key in PRODUCED_ROOTS for name in config.get(key) or {}}


def produced_output(config: dict, folder) -> str | None:
    """The rule output that makes ``folder`` (the folder, or the file its rule writes in it), or None
    where no producer of the config writes it."""
    entry = produced_folders(config).get(_norm(folder))
    return None if entry is None else entry_output(*entry)


def is_produced(config: dict, folder) -> bool:
    """Whether a rule of this DAG writes ``folder`` (its contents are then known only once written)."""
    return bool(folder) and produced_output(config, folder) is not None


def produced_inputs(config: dict) -> list[str]:
    """The rule outputs this dataset reads: what makes its ``dataset.path`` and its ``encoder.name``."""
    named = [config.get("dataset", {}).get("path"), config.get("encoder", {}).get("name")]
    return sorted({produced_output(config, p) for p in named if is_produced(config, p)})


def collection_of(config: dict, encoding: str) -> str:
    """The collection folder an encoding reads (a produced one is then an input of its job)."""
    return _norm(config["encodings"][encoding]["collection"])


def tower_vectors(config: dict, tower: str) -> str:
    """The vectors folder a tower is written over (a produced one is then an input of its job)."""
    return _norm(config["towers"][tower]["vectors"])


def world_knobs(knobs: dict | None) -> dict:
    """Every :class:`~ehi.data.vector_world.WorldConfig` knob of a ``worlds`` entry, defaults filled."""
    from ehi.data.vector_world import WorldConfig

    return WorldConfig.from_dict(knobs).to_dict()


def check_worlds(worlds: dict, root: str | os.PathLike = PRODUCED_ROOTS["worlds"]) -> None:
    """Refuse, before any job runs and naming the entry, a ``worlds`` entry whose knobs
    :class:`~ehi.data.vector_world.WorldConfig` does not know or holds out of range, or whose size
    is beyond this machine's memory (:func:`ehi.data.world_checks.check_world`). The disk is checked
    for worlds not yet written only: one already there may need no job."""
    from ehi.core.errors import UserError
    from ehi.data.vector_world import WorldConfig
    from ehi.data.world_checks import check_world

    for name, knobs in worlds.items():
        try:
            world = WorldConfig.from_dict(knobs)
            out = Path(root) / name
            check_world(world, None if out.exists() else out)
        except (TypeError, ValueError) as err:
            raise UserError(f"worlds entry {name!r}: {err}") from None


def check_encodings(encodings: dict) -> None:
    """Refuse an ``encodings`` entry whose encoder is no built-in alias, no local model folder and no
    hub id (or a hub id not in the cache while HF_HUB_OFFLINE=1), naming the entry."""
    from ehi.core.config_values import encoder_dim
    from ehi.core.errors import ConfigError

    for name, entry in encodings.items():
        encoder = (entry or {}).get("encoder", DEFAULT_ENCODER)
        if not isinstance(encoder, str) or not encoder:
            raise ConfigError(f"config encodings.{name}.encoder: {encoder!r} is not an encoder name")
        encoder_dim(encoder, where=f"encodings.{name}.encoder")


def name_pattern(entries) -> str:
    """A wildcard constraint matching exactly the names of a producer's config entries (none: nothing)."""
    import re

    return "|".join(map(re.escape, entries)) or "(?!)"
