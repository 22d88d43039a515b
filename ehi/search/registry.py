"""ANNS baselines over any embedding matrix: one registry entry per kind, the one place a kind is named.

Every searcher follows the contract of :mod:`ehi.search.base` (rows, scores, n_scored) and names
its budget knob, so one evaluation loop covers them all, EHI's own tree included::

    s = build_searcher("faiss-ivf", doc_emb, nlist=64)
    for nprobe in s.default_sweep():
        rows, scores, n_scored = s.search(query_emb, 1000, nprobe)

A kind is the search half of a system name (docs/systems_and_metrics.md): ``de+faiss-ivf`` is the
DE encoder's embeddings searched by the ``faiss-ivf`` kind. An :class:`AnnKind` says everything the
pipeline needs of a kind: its searcher class, its tuning grid and the ``search.*`` keys that grid
reads (the search rule's params), how to build it from embedding shards, or (``from_index``) how to
load it from the trained index of rule ``ehi_index`` instead: EHI's ``tree`` and ``tree-pq`` are
such entries (:mod:`ehi.search.tree_search`), with no case of their own anywhere else. Its style in
the figures (marker, colours, whether the paper ran it) is in the entry too. A new baseline is one
module with a :class:`~ehi.search.base.Searcher` plus one :func:`register_kind` call (in a plugin
module, see :mod:`ehi.core.plugins`, or in ``_BUILTIN``); a new partitioner is one function and
:func:`ehi.search.partition.partition_kind`; a FAISS index is a factory string in the config
(``search.faiss_factories``, :mod:`ehi.search.factory_kinds`).

Classes are named as ``"module:attribute"`` strings and imported on first use: the Snakefile
imports this module to constrain its ``system`` wildcard, and must not pay for faiss or ScaNN.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ehi.core.config import canonical
from ehi.core.config_values import LIST_KEYS
from ehi.core.errors import ConfigError
from ehi.core.plugins import load_plugins, resolve
from ehi.search.base import Searcher, SearchResult, log_grid
from ehi.search.grids import (TREE_LEAVES, hnsw_grid, ivf_grid, ivfpq_grid, scann_ah_grid, scann_grid,
                              tree_lists_grid, tree_lists_pq_grid)

ENCODERS = ("pre", "de", "ehi")
# the built-in kinds other modules build or label by name (EHI's tree, exhaustive search, k-means
# IVF): named here, in their entries, so the report and evaluation hold no kind name of their own
TREE_KIND, EXACT_KIND, IVF_KIND = "tree", "exact", "faiss-ivf"
PQ_SETTINGS = ("pq_m", "pq_nbits", "pq_rerank")  # search.* keys of PQ scoring (any kind that offers it)
COMMON_SETTINGS = ("k", "batch_size", "threads", "budget_cost", "max_frac")  # search.* keys every system's search reads
# left out of params at these values
UNLISTED_DEFAULTS = {"lists_from_leaf_count": False, "budget_cost": "documents", "max_frac": 1.0}


@dataclass(frozen=True)
class AnnKind:
    """One ANNS kind. ``grid(n_docs, settings)`` lists the build candidates tuned on the tune split,
    ``settings`` being the search section (a :class:`~ehi.search.config.SearchConfig`) or None for
    the defaults; ``settings_keys`` are the search keys it reads."""

    name: str
    searcher: str  # "module:Class"; Class.build(emb, **params) and Class.load(path, meta)
    grid: Callable[[int, Any], list[dict]]
    settings_keys: tuple[str, ...] = ()
    build_defaults: tuple[tuple[str, Any], ...] = ()  # fixed keywords of Class.build
    tuned: bool = True  # False: built as it is, nothing to tune (exact search)
    marker: str = "."  # matplotlib marker of its systems in every figure (ehi.report.styles)
    in_paper: bool = True  # False: a baseline the paper did not run, marked so in the figures
    from_shards: str | None = None  # "module:function"(shards, train_size, seed, **params); None: to_array
    # "module:function"(index_path, settings) -> (budget_param, budgets, searcher, built params): the
    # kind searches the trained index of rule ehi_index, not embeddings; None: built over embeddings
    from_index: str | None = None
    encoders: tuple[str, ...] = ()  # the encoders whose systems it can search; empty: every one
    ehi_search: bool = False  # EHI's own search: drawn on top, asked the tree's significance questions
    colours: tuple[tuple[str, str], ...] = ()  # (encoder, colour) of its systems in every figure
    # search.* keys that map kind names to settings (search.faiss_factories): the search rule's
    # params hold this kind's entry only, so editing another kind's entry reruns nothing here
    keyed_settings: tuple[str, ...] = ()
    # (module, extra): an optional dependency its searcher imports, and the ehi extra that installs it
    needs: tuple[str, str] | None = None
    # its one list count is the tree's leaf count (search rule param ``tree_leaves``, from train.branching
    # and height or rule dev_leaf_count's choice), not a grid tuned on dev: the IVF control of a tree
    tree_lists: bool = False

    def colour_of(self, encoder: str) -> str | None:
        return dict(self.colours).get(encoder)

    def searcher_class(self) -> type[Searcher]:
        return resolve(self.searcher)

    def shard_builder(self) -> Callable | None:
        """The builder from embedding shards, or None: build from the shards' full array."""
        return resolve(self.from_shards) if self.from_shards else None

    def rule_settings_keys(self) -> tuple[str, ...]:
        lists = ("lists_from_leaf_count",) if self.reads_list_counts() else ()
        return COMMON_SETTINGS + (("tune_split",) if self.tuned else ()) + self.settings_keys + lists

    def reads_list_counts(self) -> bool:
        """Whether the kind partitions the corpus into lists (search.ivf_nlist or scann_leaves)."""
        return bool(set(self.settings_keys) & set(LIST_KEYS))


_FAISS, _SCANN, _SHARDS = "ehi.search.faiss_ann", "ehi.search.scann_ann", "ehi.search.faiss_shards"
_ON_INDEX = "ehi.search.tree_search"  # searches of the trained index
_BUILTIN = (
    # EHI's tree: beam search over the index of rule ehi_index, its leaves scored flat or as PQ codes
    AnnKind(TREE_KIND, "ehi.search.exported:ExportedIndex", lambda n, s: [{}], ("ehi_beams",), tuned=False,
            marker="o", from_index=f"{_ON_INDEX}:flat_tree_search", encoders=("ehi",), ehi_search=True,
            colours=(("ehi", "#d62728"), ("ehi-warm", "#7f0000"))),
    AnnKind("tree-pq", "ehi.search.exported:ExportedIndex", lambda n, s: [{}], ("ehi_beams", *PQ_SETTINGS),
            tuned=False, marker="o", in_paper=False, from_index=f"{_ON_INDEX}:pq_tree_search", encoders=("ehi",),
            ehi_search=True, colours=(("ehi", "#ff9896"), ("ehi-warm", "#c45a5a"))),
    AnnKind(EXACT_KIND, f"{_FAISS}:FlatSearcher", lambda n, s: [{}], tuned=False, marker="*", from_shards=f"{_SHARDS}:flat_from_shards",
            colours=(("ehi", "#ff7f0e"), ("ehi-warm", "#b35806"), ("de", "#1f77b4"), ("pre", "#7f7f7f"))),
    AnnKind(IVF_KIND, f"{_FAISS}:IVFSearcher", ivf_grid, ("ivf_nlist",), marker="s",
            from_shards=f"{_SHARDS}:ivf_from_shards", colours=(("ehi", "#e377c2"), ("de", "#17becf"))),
    AnnKind("faiss-hnsw", f"{_FAISS}:HNSWSearcher", hnsw_grid, ("hnsw_M", "hnsw_ef_construction"),
            marker="^", in_paper=False, from_shards=f"{_SHARDS}:hnsw_from_shards",
            colours=(("ehi", "#9467bd"), ("de", "#2ca02c"))),
    AnnKind("scann", f"{_SCANN}:ScannSearcher", scann_grid, ("scann_leaves",), (("scoring", "bf"),),
            marker="D", colours=(("ehi", "#8c564b"), ("de", "#bcbd22")), needs=("scann", "scann")),
    AnnKind("scann-ah", f"{_SCANN}:ScannSearcher", scann_ah_grid, ("scann_leaves",), (("scoring", "ah"),),
            marker="x", in_paper=False, colours=(("ehi", "#c49c94"), ("de", "#1a3a6b")), needs=("scann", "scann")),
    AnnKind("faiss-ivfpq", "ehi.search.faiss_pq:IVFPQSearcher", ivfpq_grid, ("ivf_nlist", *PQ_SETTINGS),
            marker="s", in_paper=False, colours=(("ehi", "#f7b6d2"), ("de", "#98df8a"))),
    # the IVF control of the tree: k-means lists (FAISS-IVF's, a partitioner), as many as the tree's
    # leaves, probed in IVF's order at the tree's beams; nothing trained, nothing tuned
    AnnKind("ivf-lists", "ehi.search.ivf_lists:TreeListsSearcher", tree_lists_grid, ("ehi_beams",), tuned=False,
            marker="v", in_paper=False, tree_lists=True,
            colours=(("pre", "#393b79"), ("de", "#6b6ecf"), ("ehi", "#843c39"))),
    # the control of tree-pq: those lists scored by tree-pq's codes (search.pq_*), re-ranked alike
    AnnKind("ivf-lists-pq", "ehi.search.ivf_lists:TreeListsPQSearcher", tree_lists_pq_grid,
            ("ehi_beams", *PQ_SETTINGS), tuned=False, marker="v", in_paper=False, tree_lists=True,
            colours=(("pre", "#9c9ede"), ("de", "#a55194"), ("ehi", "#e7969c"))),
)
_REGISTRY: dict[str, AnnKind] = {kind.name: kind for kind in _BUILTIN}
KINDS = tuple(k.name for k in _BUILTIN if not k.from_index)  # the built-in kinds over embeddings


def register_kind(kind: AnnKind) -> AnnKind:
    """Add an ANNS kind (a plugin's); a name already taken is an error, not a silent override."""
    if kind.name in _REGISTRY:
        raise ValueError(f"ANNS kind {kind.name!r} is already registered")
    if not re.fullmatch(r"[a-z0-9][a-z0-9_-]*", kind.name):
        raise ValueError(f"ANNS kind name {kind.name!r}: use lower-case letters, digits, '-' and '_'")
    _REGISTRY[kind.name] = kind
    return kind


def _load_extensions() -> None:
    """The plugins' kinds and the config's FAISS factories (ehi.search.factory_kinds)."""
    from ehi.search.factory_kinds import load_exported

    load_plugins()
    load_exported()


def kinds() -> tuple[str, ...]:
    """Every registered kind built over embeddings, built-in first, then the plugins' and the
    factories' in registration order (:func:`searches` adds those that search the trained index)."""
    _load_extensions()
    return tuple(name for name, kind in _REGISTRY.items() if not kind.from_index)


def ann_kind(name: str) -> AnnKind:
    _load_extensions()
    if name not in _REGISTRY:
        raise ValueError(f"unknown ANNS kind {name!r}; known: {tuple(_REGISTRY)}")
    return _REGISTRY[name]


def searches() -> tuple[str, ...]:
    """The search halves a system name may have: the kinds that search the trained index (EHI's
    tree, plain and over PQ codes), then every kind built over embeddings."""
    return tuple(kind.name for kind in entries())


def budgeted(system: str) -> bool:
    """Whether a system's search has a budget to sweep (a tree's beam, IVF's nprobe, ...) rather than
    scoring every document, as its kind's searcher says (a FAISS factory's, by its string)."""
    kind = ann_kind(system.split("+", 1)[-1])
    return kind.searcher_class().sweeps_budget(**dict(kind.build_defaults))


def entries(plugins: bool = True) -> tuple[AnnKind, ...]:
    """Every registered entry in :func:`searches` order; ``plugins`` False: those registered so
    far, without importing the plugin modules (what a module reads at its own import)."""
    if plugins:
        _load_extensions()
    return (*(k for k in _REGISTRY.values() if k.from_index), *(k for k in _REGISTRY.values() if not k.from_index))


def system_pattern(encoders=ENCODERS) -> str:
    """The regex of a system name ``{encoder}+{search}`` (the Snakefile's wildcard constraint)."""
    alternatives = lambda names: "|".join(re.escape(n) for n in names)  # noqa: E731
    return rf"({alternatives(encoders)})\+({alternatives(searches())})"


def check_systems(systems, key: str = "search.systems", encoders=ENCODERS) -> None:
    """Fail, naming the config key, on a system whose encoder or search is not registered."""
    pattern = re.compile(system_pattern(encoders))
    bad = [s for s in systems if not pattern.fullmatch(str(s))]
    if bad:
        raise ConfigError(f"config {key}: unknown system(s) {bad}; a system is {{encoder}}+{{search}} with "
                          f"encoder in {list(encoders)} and search in {list(searches())}")
    # a kind may search one encoder's artefact only (EHI's tree index): de+tree would wait for an
    # index no rule can build
    for search in dict.fromkeys(s.split("+", 1)[1] for s in systems):
        kind = ann_kind(search)
        if kind.needs and importlib.util.find_spec(kind.needs[0]) is None:
            raise ConfigError(f"config {key}: {[s for s in systems if s.split('+', 1)[1] == search]} need "
                              f"{kind.needs[0]}, which is not installed: pip install 'ehi[{kind.needs[1]}]' "
                              "(or leave these systems out)")
        wrong = [s for s in systems if s.split("+", 1)[1] == search and kind.encoders
                 and s.split("+", 1)[0] not in kind.encoders]
        if wrong:
            what = "a tree index (rule ehi_index)" if kind.from_index else f"{search!r}"
            raise ConfigError(f"config {key}: {wrong} search {what}, which only the {'/'.join(kind.encoders)} "
                              f"encoder has; use {' or '.join(e + '+' + search for e in kind.encoders)}, or another "
                              f"search (exact, faiss-ivf, ...) for the {sorted({s.split('+')[0] for s in wrong})} encoder(s)")


def rule_settings(search_section: dict, system: str, tree_leaves: int | str | None = None) -> dict:
    """The search keys one system's search reads, keys sorted: the search rule's params, so a change
    to ``hnsw_M`` reruns the HNSW searches only and reordering the section reruns nothing. A kind
    whose lists are the tree's (``tree_lists``) also gets ``tree_leaves`` (grids.tree_leaf_count)."""
    kind = ann_kind(system.split("+", 1)[1])
    keys = kind.rule_settings_keys()
    # these enter only when set, so runs that keep their defaults keep their params
    settings = {key: search_section[key] for key in keys
                if key in search_section
                and (key not in UNLISTED_DEFAULTS or search_section[key] != UNLISTED_DEFAULTS[key])}
    keyed = {key: {kind.name: search_section[key][kind.name]} for key in kind.keyed_settings
             if kind.name in (search_section.get(key) or {})}
    tree = {TREE_LEAVES: tree_leaves} if kind.tree_lists and tree_leaves is not None else {}
    return canonical({**settings, **keyed, **tree})


def build_searcher(kind: str, emb: np.ndarray, **params) -> Searcher:
    """Build the ``kind`` index over ``emb`` (N, d); ``params`` are that builder's keywords.

    Unknown keywords fail loudly (a typo in a config must not silently build the default index).
    """
    entry = ann_kind(kind)
    if entry.from_index:
        raise ValueError(f"{kind!r} searches a trained tree index, not embeddings: load it with {entry.from_index}")
    return entry.searcher_class().build(emb, **dict(entry.build_defaults), **params)


def load_searcher(path: str | os.PathLike) -> Searcher:
    """Load an index directory written by :meth:`Searcher.save`."""
    path = Path(path)
    meta = json.loads((path / "params.json").read_text())
    try:
        entry = ann_kind(meta["kind"])
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None
    return entry.searcher_class().load(path, meta)


def __getattr__(name):
    # the searcher classes, re-exported without importing faiss/scann with the registry
    classes = {"FlatSearcher": f"{_FAISS}:FlatSearcher", "IVFSearcher": f"{_FAISS}:IVFSearcher",
               "HNSWSearcher": f"{_FAISS}:HNSWSearcher", "ScannSearcher": f"{_SCANN}:ScannSearcher",
               "IVFPQSearcher": "ehi.search.faiss_pq:IVFPQSearcher"}
    if name in classes:
        return resolve(classes[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["KINDS", "AnnKind", "Searcher", "SearchResult", "ann_kind", "budgeted", "build_searcher", "check_systems", "entries",
           "kinds", "load_searcher", "log_grid", "register_kind", "rule_settings", "searches",
           "system_pattern"]

