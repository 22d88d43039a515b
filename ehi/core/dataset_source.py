"""A dataset named by the producer that writes its folder, read as that folder before the schema
fills any default: ``dataset: {world: n1e4}`` is ``resources/worlds/n1e4``, ``{encoding: NAME}``
``resources/vectors/NAME``, each with its identity tower as the encoder unless the config names one.
A name, not a path, identifies a collection (as ir_datasets' ids do); the producers themselves are
``ehi.data.produced``'s."""

from __future__ import annotations

from pathlib import Path

from ehi.core.catalog import PRODUCED_ROOTS, produced_folder
from ehi.core.errors import ConfigError

# a dataset's source named by its producer's entry, rather than by the folder that entry writes
NAMED_SOURCES = {"world": "worlds", "encoding": "encodings"}


def name_dataset_source(config: dict, where: str = "config dataset", producers: dict | None = None) -> dict:
    """``config`` with ``dataset: {world: NAME}`` or ``{encoding: NAME}`` read as the embeddings
    folder that producer writes (``resources/worlds/NAME``, ``resources/vectors/NAME``), and, where
    the config names no encoder, the identity tower over it (the folder itself). A name, not a path,
    identifies a collection, as ir_datasets' ids do: it is an entry of the producer's section
    (``worlds:``, ``encodings:`` of ``producers``, default ``config``) or a folder written already;
    ``source`` or ``path`` beside it is refused. Returns the config (changed in place)."""
    dataset = config.get("dataset") or {}
    named = [key for key in NAMED_SOURCES if dataset.get(key) is not None]
    if not named:
        return config
    key = named[0]
    known = known_names(key, config if producers is None else producers)
    if len(named) > 1 or {"source", "path"} & set(dataset):
        given = sorted({*named, *({"source", "path"} & set(dataset))})
        fault = (f": {given} given together; a dataset names one source (dataset.world or dataset.encoding, or "
                 "dataset.source with its path)")
    elif not isinstance(dataset[key], str) or dataset[key] not in known:
        fault = (f".{key}: {dataset[key]!r} is no {key} of this config's {NAMED_SOURCES[key]}: entries nor a folder under "
                 f"{PRODUCED_ROOTS[NAMED_SOURCES[key]]}/; known: {', '.join(known) or 'none'}")
    else:
        fault = ""
    if fault:
        raise ConfigError(f"{where}{fault}")
    folder = produced_folder(NAMED_SOURCES[key], dataset.pop(key))
    dataset.update(source="embeddings", path=folder)
    config["dataset"] = dataset
    if not (config.get("encoder") or {}).get("name"):
        config.setdefault("encoder", {})["name"] = folder
    return config


def known_names(key: str, config: dict) -> list[str]:
    """The names ``dataset.<key>`` may give (``key``: world or encoding): the entries of the
    config's producer section, and the folders written under that producer's root already."""
    section = NAMED_SOURCES[key]
    root = Path(PRODUCED_ROOTS[section])
    written = [p.name for p in root.iterdir() if p.is_dir()] if root.is_dir() else []
    return sorted({*map(str, config.get(section) or {}), *written})


def name_dataset_sources(config: dict) -> dict:
    """:func:`name_dataset_source` over a config's own dataset and each of its ``datasets`` entries
    (whose producers are the config's), before the schema fills any default (a default ``source``
    would read as one given)."""
    name_dataset_source(config)
    for name, entry in (config.get("datasets") or {}).items():
        if entry:
            name_dataset_source(entry, where=f"config datasets.{name}.dataset", producers=config)
    return config
