"""What a config names by its producer, read as the folder the catalog gives for it before the
schema fills any default (:mod:`ehi.core.catalog`):

- a dataset: ``dataset: {world: n1e4}`` is ``resources/worlds/n1e4``, ``{encoding: NAME}``
  ``resources/vectors/NAME`` (each with its identity tower as the encoder unless the config names
  one), ``{collection: NAME}`` the BEIR folder ``resources/sources/NAME``;
- an encoder: ``encoder: {tower: NAME}`` is the tower folder ``resources/towers/NAME``;
- a producer's input: an ``encodings`` entry's ``collection`` naming a ``collections`` entry, a
  ``towers`` entry's ``vectors`` naming an ``encodings`` or ``worlds`` entry.

A name, not a path, identifies a collection (as ir_datasets' ids do); the producers themselves are
``ehi.data.produced``'s."""

from __future__ import annotations

from pathlib import Path

from ehi.core.catalog import PRODUCED_ROOTS, VECTOR_SECTIONS, produced_folder
from ehi.core.errors import ConfigError

# a dataset's source named by its producer's entry, rather than by the folder that entry writes
NAMED_SOURCES = {"world": "worlds", "encoding": "encodings", "collection": "collections"}
# the layout a producer's folders hold, which a dataset named by one of its entries reads them as
SOURCE_LAYOUT = {"worlds": "embeddings", "encodings": "embeddings", "collections": "beir"}


def name_dataset_source(config: dict, prefix: str = "config ", producers: dict | None = None) -> dict:
    """``config`` with ``dataset: {world: NAME}``, ``{encoding: NAME}`` or ``{collection: NAME}``
    read as the folder that producer writes, in its layout, and, for vectors where the config names
    no encoder, the identity tower over them (the folder itself); ``encoder: {tower: NAME}`` read as
    that tower's folder first. A name is an entry of the producer's section (of ``producers``,
    default ``config``) or a folder written already; ``source`` or ``path`` beside a dataset's name
    is refused. ``prefix`` starts each refusal (``config datasets.NAME.`` for a datasets entry).
    Returns the config (changed in place)."""
    producers = config if producers is None else producers
    name_encoder_tower(config, f"{prefix}encoder", producers)
    where = f"{prefix}dataset"
    dataset = config.get("dataset") or {}
    named = [key for key in NAMED_SOURCES if dataset.get(key) is not None]
    if not named:
        return config
    key = named[0]
    section = NAMED_SOURCES[key]
    if len(named) > 1 or {"source", "path"} & set(dataset):
        given = sorted({*named, *({"source", "path"} & set(dataset))})
        raise ConfigError(f"{where}: {given} given together; a dataset names one source (dataset.world, "
                          "dataset.encoding or dataset.collection, or dataset.source with its path)")
    folder = produced_folder(section, _known(dataset[key], section, f"{where}.{key}", producers))
    dataset.pop(key)
    dataset.update(source=SOURCE_LAYOUT[section], path=folder)
    config["dataset"] = dataset
    if SOURCE_LAYOUT[section] == "embeddings" and not (config.get("encoder") or {}).get("name"):
        config.setdefault("encoder", {})["name"] = folder
    return config


def name_encoder_tower(config: dict, where: str, producers: dict) -> None:
    """``encoder: {tower: NAME}`` read as ``encoder.name``, the folder of the ``towers`` entry
    ``NAME`` (or of a tower written already); beside ``encoder.name`` it is refused."""
    encoder = config.get("encoder") or {}
    if encoder.get("tower") is None:
        return
    if encoder.get("name") is not None:
        raise ConfigError(f"{where}: tower and name given together; an encoder is a tower by its name, or a model")
    encoder["name"] = produced_folder("towers", _known(encoder.pop("tower"), "towers", f"{where}.tower", producers))


def _known(name, section: str, where: str, producers: dict) -> str:
    """``name`` where it is an entry of ``producers``' ``section`` or a folder written under its
    root; else a ConfigError naming ``where`` and the names known."""
    known = known_names(section, producers)
    if not isinstance(name, str) or name not in known:
        singular = next((k for k, s in NAMED_SOURCES.items() if s == section), section.removesuffix("s"))
        raise ConfigError(f"{where}: {name!r} is no {singular} of this config's {section}: entries nor a folder "
                          f"under {PRODUCED_ROOTS[section]}/; known: {', '.join(known) or 'none'}")
    return name


def known_names(section: str, config: dict) -> list[str]:
    """The names a config may give of ``section``'s entries (worlds, encodings, collections,
    towers): the entries of the config's section, and the folders written under its root already."""
    root = Path(PRODUCED_ROOTS[section])
    written = [p.name for p in root.iterdir() if p.is_dir()] if root.is_dir() else []
    return sorted({*map(str, config.get(section) or {}), *written})


def name_producer_inputs(config: dict) -> dict:
    """An ``encodings`` entry's ``collection`` that names a ``collections`` entry, and a ``towers``
    entry's ``vectors`` that names an ``encodings`` or ``worlds`` entry, read as that entry's folder;
    anything else is a local folder and kept. Returns the config (changed in place)."""
    for entry in (config.get("encodings") or {}).values():
        if isinstance(entry, dict) and _entry_of(entry.get("collection"), ("collections",), config):
            entry["collection"] = produced_folder("collections", entry["collection"])
    for name, entry in (config.get("towers") or {}).items():
        vectors = entry.get("vectors") if isinstance(entry, dict) else None
        sections = [s for s in VECTOR_SECTIONS if _entry_of(vectors, (s,), config)]
        if len(sections) > 1:
            raise ConfigError(f"config towers.{name}.vectors: {vectors!r} names an entry of both {' and '.join(sections)}")
        if sections:
            entry["vectors"] = produced_folder(sections[0], vectors)
    return config


def _entry_of(name, sections, config: dict) -> bool:
    return isinstance(name, str) and any(name in (config.get(s) or {}) for s in sections)


def name_dataset_sources(config: dict) -> dict:
    """:func:`name_dataset_source` over a config's own dataset and each of its ``datasets`` entries
    (whose producers are the config's), and :func:`name_producer_inputs`, before the schema fills
    any default (a default ``source`` would read as one given)."""
    name_producer_inputs(config)
    name_dataset_source(config)
    for name, entry in (config.get("datasets") or {}).items():
        if entry:
            name_dataset_source(entry, prefix=f"config datasets.{name}.", producers=config)
    return config
