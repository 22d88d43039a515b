"""The indexes the benchmarks compare, built the same way by every family.

``ehi-scan`` is EHI as this package serves it everywhere (:class:`ehi.search.exported.ExportedIndex`:
the tree's numpy router picks the leaves, FAISS IVF-Flat scans them with ``search_preassigned``;
at height 1 FAISS's quantizer routes). The leaf assignment runs on one torch thread and the
router on one BLAS thread: on this shared machine a 2-thread pool made them 3-20x slower
(barriers waiting for descheduled threads).
Peers: FAISS IVF-Flat (sqrt(N) lists), FAISS HNSW (M=16, efConstruction=100, the same at every N),
ScaNN with exact scoring in its partitions (``scann``) and with anisotropic hashing + exact
re-ranking of 1,000 candidates (``scann-ah``), both with sqrt(N) partitions.
"""

from __future__ import annotations

import time

import numpy as np

from ehi.search.exported import ExportedIndex
from ehi.search.registry import KINDS, ann_kind, build_searcher, log_grid
from ehi.search.base import Searcher
from ehi.train.label_free import torch_threads

EHI = ("ehi-scan",)
COMPRESSED = ("faiss-ivfpq",)  # PQ codes: compared with EHI's own PQ leaves in the export family
PEERS = tuple(k for k in KINDS if ann_kind(k).tuned and k not in COMPRESSED)  # float ANNS kinds, exact aside
HNSW = {"M": 16, "ef_construction": 100}
ROUTE_THREADS = 1  # the leaf assignment's torch threads (see the module doc)


def build(name: str, docs: np.ndarray, tree=None) -> tuple[Searcher, float]:
    """(searcher, build seconds). EHI's build is the leaf assignment of a trained ``tree`` (one
    forward pass) plus filling the lists; training the tree is timed separately."""
    start = time.perf_counter()
    if name == "ehi-scan":
        with torch_threads(ROUTE_THREADS):
            leaf = tree.assign_leaves(docs)
        searcher = ExportedIndex.from_leaves(tree, docs, leaf)
    elif name == "faiss-hnsw":
        searcher = build_searcher(name, docs, **HNSW)
    elif name in PEERS:
        searcher = build_searcher(name, docs)
    else:
        raise ValueError(f"unknown benchmark system {name!r}")
    return searcher, time.perf_counter() - start


def sweep(searcher: Searcher, k: int) -> list[int]:
    """Budgets from cheap to (near) exhaustive. HNSW starts at efSearch = k: below it returns
    fewer than k results, so Recall@k could not reach the targets."""
    if searcher.name == "faiss-hnsw":
        return log_grid(k, min(searcher.n_docs, 4096), 12)
    return searcher.default_sweep()


def mid_budget(searcher: Searcher) -> int:
    """A budget near 2% of the lists (HNSW: efSearch 200) for the memory and build runs' search."""
    if searcher.name == "faiss-hnsw":
        return 200
    return max(1, round(0.02 * searcher.default_sweep()[-1]))
