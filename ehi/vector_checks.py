"""Checks of a config over precomputed vectors (``dataset.source: embeddings``, docs/embeddings.md)
that its schema cannot express, run while the Snakefile is parsed so that ``snakemake -n`` refuses
them in one line rather than a job failing, or worse, running to a meaningless table:

- a text encoder over vectors: it would embed the row keys (``d:0``, ``d:1``, ...) as text;
- a dual encoder (or any system that trains the encoder alone) over a tower that cannot train:
  the identity tower has no weights, and ``train.freeze_layers`` > 0 freezes a tower whole;
- ``evaluation.pre_baselines`` beside an encoder that trains: the pre+ searches are baselines only
  where nothing but the tree is trained;
- a vectors dataset whose name came with another config's dataset: its results would overwrite
  that dataset's (``results/<name>/``);
- a vectors folder that does not exist: its identity tower's name would otherwise be looked up as
  a Hugging Face hub id, and refused as one missing from the cache.

Light on purpose, as :mod:`ehi.config_checks` (no torch): a tower folder is read as JSON.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import yaml

from ehi.core.config_files import key_source
from ehi.core.errors import ConfigError

VECTOR_SOURCE = "embeddings"
TOWER_SPEC = "tower.json"  # ehi.model.tower.SPEC, named here so the Snakefile's parse imports no torch


def tower_kind(name: str) -> str | None:
    """The kind of the vector tower ``encoder.name`` names (an embeddings folder is its identity
    tower), or None where it names no tower (a text encoder)."""
    path = Path(str(name))
    if (path / TOWER_SPEC).is_file():
        try:
            return str(json.loads((path / TOWER_SPEC).read_text()).get("kind", "identity"))
        except (OSError, ValueError, AttributeError):
            raise ConfigError(f"config encoder.name: {path / TOWER_SPEC} is not a readable tower spec") from None
    return "identity" if (path / "doc_ids.txt").is_file() else None


def is_text_encoder(name: str, vectors: str | None) -> bool:
    """Whether ``encoder.name`` is known, before any job, to be a text encoder: a built-in alias, an
    existing folder that holds no tower, or a hub id (``name`` or ``owner/name``) that is neither a
    local path nor the vectors' folder. A path that does not exist yet (a tower a rule writes, a
    fresh clone re-rendering committed results) is left to the job."""
    from ehi.core.config_values import MINILM_ALIASES, TINY_RANDOM

    name = str(name)
    if name.lower() in (*MINILM_ALIASES, TINY_RANDOM[0]):
        return True
    if Path(name).exists():
        return tower_kind(name) is None
    return bool(re.fullmatch(r"[\w.-]+(/[\w.-]+)?", name)) and name != str(vectors)


def check_vector_encoder(config: dict) -> None:
    """Over vectors the encoder is a tower; a tower reads vector datasets only."""
    source, name = config["dataset"]["source"], config["encoder"]["name"]
    kind = tower_kind(name)
    if source == VECTOR_SOURCE and is_text_encoder(name, config["dataset"].get("path")):
        raise ConfigError(f"config encoder.name: {name!r} is a text encoder, but dataset.source {VECTOR_SOURCE} "
                          "holds vectors; name the vectors' folder itself (the identity tower, "
                          f"{config['dataset'].get('path')!r}) or a tower folder (docs/embeddings.md)")
    if kind is not None and source != VECTOR_SOURCE:
        raise ConfigError(f"config encoder.name: {name!r} is a vector tower, which reads dataset.source "
                          f"{VECTOR_SOURCE} only (dataset.source is {source!r})")


def check_vectors_folder(dataset: dict, produced=()) -> None:
    """A vectors dataset's folder exists, or is one a rule of this DAG writes (``produced``: the
    folders of ehi.data.produced.produced_folders); a relative path is read from the working
    directory, which the refusal names."""
    if dataset.get("source") != VECTOR_SOURCE or not dataset.get("path"):
        return
    path = str(dataset["path"])
    folder = Path(path).expanduser()
    if os.path.normpath(path) in set(produced) or folder.is_dir():
        return
    where = "" if folder.is_absolute() else f" ({path!r} read from the working directory {Path.cwd()})"
    raise ConfigError(f"config dataset.path: no such folder: {folder.resolve()}{where}")


def check_trainable_encoder(config: dict, trains: dict[str, dict]) -> None:
    """No system that trains the encoder alone (``de+...``) over a tower that cannot train."""
    kind = tower_kind(config["encoder"]["name"])
    if kind is None:
        return
    for where, train in trains.items():
        systems_key = "search.systems" if where == "train" else "ablation_systems"
        systems = config["search"]["systems"] if where == "train" else config["ablation_systems"]
        de = [s for s in systems if s.split("+", 1)[0] == "de"]
        if not de:
            continue
        if kind == "identity":
            why = "the identity tower has no weights to train"
        elif train.get("freeze_layers", 0) > 0:
            why = f"{where}.freeze_layers {train['freeze_layers']} freezes the whole tower"
        else:
            continue
        raise ConfigError(f"config {systems_key}: {', '.join(de)} train(s) the dual encoder, but {why}; "
                          "leave the de+ systems out (pre+exact is the vectors as given)")


def check_pre_baselines(config: dict, trains: dict[str, dict]) -> None:
    """``evaluation.pre_baselines`` only where no encoder trains: the searches of the vectors as given
    are then the run's off-the-shelf indexes; beside a trained encoder they are a reference point."""
    if not config["evaluation"].get("pre_baselines"):
        return
    name = config["encoder"]["name"]
    kind = tower_kind(name)
    trains_tower = [where for where, train in trains.items() if kind != "identity" and not train.get("freeze_layers", 0) > 0]
    if kind is None:
        why = f"encoder.name {name!r} is a text encoder (only a vector tower is known to be frozen whole)"
    elif trains_tower:
        why = f"{trains_tower[0]}.freeze_layers 0 trains the {kind} tower"
    else:
        return
    raise ConfigError(f"config evaluation.pre_baselines: the searches of the vectors as given are baselines only where "
                      f"no encoder trains, but {why}; leave it false")


def check_vector_dataset_name(config: dict, files: dict[str, dict], schema_path: str | os.PathLike) -> None:
    """A vectors dataset names itself: its name must not be one another config set for its own
    dataset (layered configs), nor the schema's default, or its results land on that dataset's.
    ``files``: the config files read (ehi.core.config_files); a name given on the command line
    (``--config dataset.name=...``) is the vectors' own."""
    dataset = config["dataset"]
    if dataset["source"] != VECTOR_SOURCE:
        return
    name_file = key_source(files, ("dataset", "name"))
    if name_file is not None and files[name_file]["dataset"]["name"] != dataset["name"]:
        return  # the command line set it
    # the file that names the vectors: by source and path, or by their producer's name (dataset.encoding/world)
    source_file = next((f for key in ("source", "encoding", "world") if (f := key_source(files, ("dataset", key)))), None)
    default_name = yaml.safe_load(Path(schema_path).read_text())["properties"]["dataset"]["properties"]["name"]["default"]
    if name_file is not None and name_file != source_file:
        raise ConfigError(f"config dataset.name: {dataset['name']!r} is set by {name_file}, for another dataset than "
                          f"the vectors {source_file or 'the command line'} reads; give the vectors a name of their "
                          "own (dataset.name), or their results overwrite results/" + dataset["name"])
    if name_file is None and dataset["name"] == default_name:
        raise ConfigError(f"config dataset.name: a vectors dataset needs a name of its own (dataset.name), not the "
                          f"default {default_name!r}, whose results it would overwrite")
