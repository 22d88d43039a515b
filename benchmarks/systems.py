"""The indexes the benchmarks compare, built the same way by every family.

``ehi-scan`` is EHI as this package serves it at scale (:class:`ehi.search.tree_scan.ScanIndex`: the tree
routes, FAISS IVF-Flat scans the leaves); ``ehi-torch`` is :meth:`ehi.search.tree_index.EHIIndex.search`
(torch gathers and scores the candidates), kept on small corpora to show what the scan buys.
EHI's tree passes (assignment, routing) run on one torch thread: on this shared machine torch's
2-thread pool made them 3-20x slower (barriers waiting for descheduled threads).
Peers: FAISS IVF-Flat (sqrt(N) lists), FAISS HNSW (M=16, efConstruction=100, the same at every N),
ScaNN with exact scoring in its partitions (``scann``) and with anisotropic hashing + exact
re-ranking of 1,000 candidates (``scann-ah``), both with sqrt(N) partitions.
"""

from __future__ import annotations

import time

import numpy as np

from ehi.search.registry import KINDS, ann_kind, build_searcher, log_grid
from ehi.search.base import Searcher, pad_results
from ehi.search.tree_index import EHIIndex
from ehi.search.tree_scan import ScanIndex

EHI = ("ehi-scan", "ehi-torch")
COMPRESSED = ("faiss-ivfpq",)  # PQ codes: compared with EHI's own PQ leaves in the export family
PEERS = tuple(k for k in KINDS if ann_kind(k).tuned and k not in COMPRESSED)  # float ANNS kinds, exact aside
HNSW = {"M": 16, "ef_construction": 100}
ROUTE_THREADS = 1  # EHI's tree passes on one torch thread (see ehi.search.tree_scan.ScanIndex)


class TorchEHI(Searcher):
    """EHIIndex.search behind the Searcher contract (budget = beam)."""

    name = "ehi-torch"
    budget_param = "beam"

    def __init__(self, index: EHIIndex):
        super().__init__(index.n_docs, {})
        self.index = index

    def search(self, queries, k, budget_value):
        rows, scores, n_scored = self.index.search(queries, int(budget_value), k)
        return (*pad_results(rows, scores, k), n_scored)

    def default_sweep(self):
        return log_grid(1, self.index.indexer.n_leaves, 20)

    def set_threads(self, threads):
        import torch

        torch.set_num_threads(int(threads))


def build(name: str, docs: np.ndarray, tree=None) -> tuple[Searcher, float]:
    """(searcher, build seconds). EHI's build is the leaf assignment of a trained ``tree`` (one
    forward pass) plus filling the lists; training the tree is timed separately."""
    start = time.perf_counter()
    if name == "ehi-scan":
        searcher = ScanIndex.build(docs, tree, route_threads=ROUTE_THREADS)
    elif name == "ehi-torch":
        searcher = TorchEHI(EHIIndex.build(docs, tree))
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
