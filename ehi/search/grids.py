"""The build candidates of the built-in kinds (their :class:`~ehi.search.registry.AnnKind` grids),
and the list counts the workflow hands a search from rule dev_leaf_count or the tree's shape.

Light to import (no faiss): the Snakefile reads the registry, which reads these.
"""

from __future__ import annotations

import math

from ehi.core.config_values import LIST_KEYS
from ehi.search.config import SearchConfig

# the search rule's param of a kind whose lists are the tree's (AnnKind.tree_lists): the leaf count,
# or "auto" for rule dev_leaf_count's choice (train.branching: auto)
TREE_LEAVES = "tree_leaves"


def _list_sizes(n_docs: int) -> list[int]:
    """The sqrt(N) rule from halved to x4. More lists give finer steps at low budgets, so on small
    corpora the largest size tends to win; the x4 end keeps that choice off the grid's edge."""
    root = math.sqrt(n_docs)
    return sorted({max(1, min(n_docs, round(root * f))) for f in (0.5, 1.0, 2.0, 4.0)})


def ivf_grid(n_docs, s):
    return [{"nlist": n} for n in (s and s.ivf_nlist) or _list_sizes(n_docs)]


def hnsw_grid(n_docs, s):
    if s is None:  # the usual suspects
        return [{"M": m, "ef_construction": e} for m in (16, 32) for e in (100, 200)]
    return [{"M": m, "ef_construction": s.hnsw_ef_construction} for m in s.hnsw_M]


def _pq_codes(s) -> dict:
    """The configured codes (``search.pq_*``; a null ``pq_m`` is left to the build, which needs the
    embedding dimension)."""
    s = s if s is not None else SearchConfig()
    return {**({"m": int(s.pq_m)} if s.pq_m else {}), "nbits": int(s.pq_nbits), "rerank": int(s.pq_rerank)}


def ivfpq_grid(n_docs, s):
    """IVF's candidate lists, each with the configured codes."""
    return [{**g, **_pq_codes(s)} for g in ivf_grid(n_docs, s)]


def scann_grid(n_docs, s):
    return [{"num_leaves": n} for n in (s and s.scann_leaves) or _list_sizes(n_docs)]


def scann_ah_grid(n_docs, s):
    return [{"num_leaves": n, "reorder_k": r} for n in (s and s.scann_leaves) or _list_sizes(n_docs) for r in (0, 1000)]


def tree_lists_grid(n_docs, s):
    """One build: as many lists as the tree has leaves (``ivf_nlist``, set from the tree's leaf count
    by :func:`with_leaf_count_grid`; about sqrt(N) without one), swept at the tree's beams."""
    nlists = (s and s.ivf_nlist) or [round(math.sqrt(n_docs))]
    beams = {"beams": sorted(s.ehi_beams)} if s is not None and s.ehi_beams else {}
    return [{"nlist": int(n), **beams} for n in nlists]


def tree_lists_pq_grid(n_docs, s):
    """The tree's IVF control (:func:`tree_lists_grid`) with the configured codes, as ``tree-pq``'s."""
    return [{**g, **_pq_codes(s)} for g in tree_lists_grid(n_docs, s)]


def tree_leaf_count(train: dict) -> int | str:
    """The leaf count of the tree ``train`` (the train section) describes: B^H, or "auto" where rule
    dev_leaf_count chooses it (train.branching: auto)."""
    if train["branching"] == "auto":
        return "auto"
    return int(train["branching"]) ** int(train["height"])


def with_leaf_count_grid(search_section: dict, leaf_count: dict) -> dict:
    """``search_section`` (one search rule's params) with the list counts the workflow hands it
    (``leaf_count``: rule dev_leaf_count's JSON, or {} where the rule has none as input):
    ``ivf_nlist`` and ``scann_leaves`` the grid dev_leaf_count swept where ``lists_from_leaf_count``
    asks for it; ``ivf_nlist`` the tree's leaf count alone where the section holds ``tree_leaves``."""
    section = dict(search_section)
    leaves = section.pop(TREE_LEAVES, None)
    if section.get("lists_from_leaf_count"):
        section.update({key: [int(n) for n in leaf_count["grid"]] for key in LIST_KEYS})
    if leaves is not None:
        section["ivf_nlist"] = [int(leaf_count["branching"] if leaves == "auto" else leaves)]
    return section
