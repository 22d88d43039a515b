"""The dataset source names and what the config checks need to know of each, without the parsers.

The Snakefile checks ``dataset.source`` while it parses; :mod:`ehi.data.sources` (parsers,
downloads, pandas) costs most of a second to import, so the names live here with the two facts
the checks read: whether a local copy is a BEIR directory (its qrels files say which splits have
queries) and whether the source downloads anything (if not, ``dataset.path`` is required).
:func:`ehi.data.sources.register_source` records a plugin's source here too, with the facts read
off its :class:`~ehi.data.sources.Source`; a test checks the built-in table against ``SOURCES``.

Besides these, ``synthetic`` (the generator, no files) and ``ir_datasets:<id>`` (any collection
the ir_datasets package knows) are sources.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ehi.core.plugins import load_plugins

SYNTHETIC = "synthetic"
IR_DATASETS_PREFIX = "ir_datasets:"
NAME_PATTERN = r"[a-z0-9][a-z0-9_.-]*"  # the schema's pattern for dataset.source, beside ir_datasets:<id>


@dataclass(frozen=True)
class SourceFacts:
    beir_layout: bool  # a local copy holds qrels/<split>.tsv
    downloads: bool  # False: reads dataset.path only


_BEIR, _OWN_LAYOUT = SourceFacts(beir_layout=True, downloads=True), SourceFacts(beir_layout=False, downloads=True)
_SOURCES: dict[str, SourceFacts] = {
    "beir": SourceFacts(beir_layout=True, downloads=False),
    "embeddings": SourceFacts(beir_layout=False, downloads=False),
    "scifact": _BEIR,
    "fiqa": _BEIR,
    "nfcorpus": _BEIR,
    "msmarco": _OWN_LAYOUT,
    "nq320k": _OWN_LAYOUT,
    "lf-amazontitles-131k": _OWN_LAYOUT,
}
BUILTIN_SOURCES = tuple(_SOURCES)  # what ehi.data.sources.SOURCES holds before any plugin


def add_source_name(name: str, facts: SourceFacts) -> None:
    """Record a source's name; a name already taken or outside :data:`NAME_PATTERN` is an error."""
    if name in _SOURCES or name == SYNTHETIC:
        raise ValueError(f"dataset source {name!r} is already registered")
    if not re.fullmatch(NAME_PATTERN, name):
        raise ValueError(f"dataset source name {name!r}: use lower-case letters, digits, '.', '-' and '_'")
    _SOURCES[name] = facts


def source_names() -> tuple[str, ...]:
    """Every source a config may name, plugins' included: synthetic, then the registered ones."""
    load_plugins()
    return (SYNTHETIC, *_SOURCES)


def source_facts(name: str) -> SourceFacts | None:
    """What the checks know of a registered source; None for synthetic, ir_datasets and unknown names."""
    load_plugins()
    return _SOURCES.get(name)
