"""FAISS baselines: exact (flat), IVF-Flat and HNSW, all by inner product.

Budget accounting, per query:

* flat: every document is scored, ``n_scored = N``.
* IVF: the coarse quantizer picks ``nprobe`` lists; we run that assignment ourselves
  (``quantizer.search``) and hand it to ``search_preassigned``, so the lists we count are exactly
  the lists faiss scanned; ``n_scored`` = the summed sizes of those lists. :func:`probed_lists` is
  that count for every IVF searcher (IVF-PQ, a partitioner's lists, a factory string's IVF).
* HNSW: faiss counts distance computations in ``faiss.cvar.hnsw_stats.ndis``. The counter is
  global, so we search one query at a time and reset it before each: a per-query count, not a
  batch average. It includes the greedy descent through the upper layers; those few computations
  can repeat level-0 ones, so the count is capped at N (the cap binds only when the search has
  visited the whole graph).
"""

from __future__ import annotations

import math
from pathlib import Path

import faiss
import numpy as np

from ehi.core.ivf import IVF_SEED, trained_ivf

from ehi.search.base import Searcher, SearchResult, as_matrix, factory_string, log_grid, pad_results

INDEX_FILE = "index.faiss"


def ivf_list_sizes(ivf) -> np.ndarray:
    """(nlist,) int64: the documents in each inverted list of a FAISS IVF index."""
    return np.array([ivf.invlists.list_size(i) for i in range(ivf.nlist)], dtype=np.int64)


def probed_lists(quantizer, list_sizes: np.ndarray, queries: np.ndarray, nprobe: int):
    """IVF's accounting, for every IVF searcher: the ``nprobe`` lists the coarse quantizer picks for
    each query (what ``IndexIVF.search`` probes) and the documents they hold, scored once each.
    Returns (coarse scores, lists (nq, nprobe), n_scored (nq,) int64); nprobe <= nlist, so no -1."""
    coarse_scores, lists = quantizer.search(queries, int(nprobe))
    return coarse_scores, lists, list_sizes[lists].sum(axis=1).astype(np.int64)


def default_nlist(n_docs: int) -> int:
    """About sqrt(N) lists: the usual IVF default, and one list is then ~1/sqrt(N) of the corpus."""
    return max(1, min(n_docs, int(round(math.sqrt(n_docs)))))


class FaissSearcher(Searcher):
    """What the FAISS searchers share: a faiss index in ``index.faiss`` beside ``params.json``."""

    index: faiss.Index

    @classmethod
    def load(cls, path: Path, meta: dict) -> "FaissSearcher":
        return cls(read_faiss(path), meta["params"])

    def _save_index(self, path: Path) -> None:
        faiss.write_index(self.index, str(path / INDEX_FILE))

    def faiss_index(self) -> str | None:
        owner = getattr(self, "_owner", None)  # the wrapper that owns what it wraps (refine, pre-transform)
        return factory_string(owner if owner is not None else self.index)


class FlatSearcher(FaissSearcher):
    """Exact search (IndexFlatIP): the reference every ANNS baseline converges to."""

    name = "exact"
    budget_param = "exact"

    def __init__(self, index: faiss.Index, params: dict | None = None):
        super().__init__(index.ntotal, params or {})
        self.index = index

    @classmethod
    def build(cls, emb: np.ndarray) -> "FlatSearcher":
        emb = as_matrix(emb)
        index = faiss.IndexFlatIP(emb.shape[1])
        index.add(emb)
        return cls(index)

    def search(self, queries: np.ndarray, k: int, budget_value: int = 1) -> SearchResult:
        rows, scores = self.search_ids(queries, k, budget_value)
        return rows, scores, np.full(len(rows), self.n_docs, dtype=np.int64)

    def search_ids(self, queries, k, budget_value=1):
        scores, rows = self.index.search(as_matrix(queries), min(k, self.n_docs))
        return pad_results(rows, scores, k)

    def default_sweep(self) -> list[int]:
        return [1]


class IVFSearcher(FaissSearcher):
    """IVF-Flat: k-means lists, exact scores inside the ``nprobe`` lists nearest to the query."""

    name = "faiss-ivf"
    budget_param = "nprobe"

    def __init__(self, index: faiss.Index, params: dict | None = None):
        super().__init__(index.ntotal, params or {})
        self._owner = index  # downcast wrappers do not own the C++ object: keep the one that does
        self.index = faiss.extract_index_ivf(index)
        self.quantizer = faiss.downcast_index(self.index.quantizer)
        self.list_sizes = ivf_list_sizes(self.index)

    @classmethod
    def build(cls, emb: np.ndarray, nlist: int | None = None, seed: int = IVF_SEED,
              spherical: bool = True) -> "IVFSearcher":
        """Train the coarse quantizer on the corpus itself (no held-out sample: the index is static;
        ``spherical``: cosine routing, :func:`ehi.core.ivf.trained_ivf`)."""
        emb = as_matrix(emb)
        nlist = min(int(nlist or default_nlist(len(emb))), len(emb))
        index = trained_ivf(emb, nlist, seed, spherical)
        index.add(emb)
        return cls(index, {"nlist": nlist, "seed": seed, "spherical": spherical})

    def search(self, queries: np.ndarray, k: int, budget_value: int) -> SearchResult:
        queries = as_matrix(queries)
        nprobe = max(1, min(int(budget_value), self.index.nlist))
        coarse_scores, lists, n_scored = probed_lists(self.quantizer, self.list_sizes, queries, nprobe)
        self.index.nprobe = nprobe  # search_preassigned checks the assignment's width against it
        scores, rows = self.index.search_preassigned(queries, k, lists, coarse_scores)
        return (*pad_results(rows, scores, k), n_scored)

    def routing_units(self, budget_value: int) -> int:
        return int(self.index.nlist)  # the flat quantizer scores every centroid to pick nprobe lists

    def search_ids(self, queries, k, budget_value):
        self.index.nprobe = max(1, min(int(budget_value), self.index.nlist))
        scores, rows = self.index.search(as_matrix(queries), k)
        return pad_results(rows, scores, k)

    def default_sweep(self) -> list[int]:
        return log_grid(1, self.index.nlist, 20)


class HNSWSearcher(FaissSearcher):
    """HNSW graph (IndexHNSWFlat, inner product); the budget knob is the beam width efSearch.

    A query returns at most ``min(k, efSearch)`` results: faiss would otherwise raise efSearch to
    k, and a k=1000 run could never show HNSW at a budget below ~1000 documents. The short list is
    what the index found at that budget, as an IVF run with one probe returns one list's documents.
    """

    name = "faiss-hnsw"
    budget_param = "efSearch"

    def __init__(self, index: faiss.Index, params: dict | None = None):
        super().__init__(index.ntotal, params or {})
        self._owner = index  # downcast wrappers do not own the C++ object: keep the one that does
        self.index = faiss.downcast_index(index)
        self.ef_max = int(self.params.get("ef_max", 4096))

    @classmethod
    def build(cls, emb: np.ndarray, M: int = 32, ef_construction: int = 200, ef_max: int = 4096) -> "HNSWSearcher":
        emb = as_matrix(emb)
        index = faiss.IndexHNSWFlat(emb.shape[1], int(M), faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = int(ef_construction)
        index.add(emb)
        return cls(index, {"M": int(M), "ef_construction": int(ef_construction), "ef_max": int(ef_max)})

    def search(self, queries: np.ndarray, k: int, budget_value: int) -> SearchResult:
        queries = as_matrix(queries)
        ef = max(1, int(budget_value))
        self.index.hnsw.efSearch = ef
        k_eff = min(k, ef, self.n_docs)
        rows = np.empty((len(queries), k_eff), dtype=np.int64)
        scores = np.empty((len(queries), k_eff), dtype=np.float32)
        n_scored = np.empty(len(queries), dtype=np.int64)
        stats = faiss.cvar.hnsw_stats
        for i in range(len(queries)):  # one query per call: the stats counter is process-global
            stats.reset()
            scores[i : i + 1], rows[i : i + 1] = self.index.search(queries[i : i + 1], k_eff)
            n_scored[i] = stats.ndis
        return (*pad_results(rows, scores, k), np.minimum(n_scored, self.n_docs))

    def search_ids(self, queries, k, budget_value):
        ef = max(1, int(budget_value))
        self.index.hnsw.efSearch = ef
        scores, rows = self.index.search(as_matrix(queries), min(k, ef, self.n_docs))
        return pad_results(rows, scores, k)

    def default_sweep(self) -> list[int]:
        """efSearch from 1 to min(N, ef_max).

        Beams below 10 return fewer than 10 documents, which costs the @10 metrics; they are kept
        because on a small corpus they are HNSW's only points near the 1-5 % budgets.
        """
        return log_grid(1, min(self.n_docs, self.ef_max), 20)


def read_faiss(path: Path) -> faiss.Index:
    return faiss.read_index(str(path / INDEX_FILE))
