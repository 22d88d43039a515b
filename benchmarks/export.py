"""Family 'export': EHI through its exported FAISS index, and EHI with compressed leaves.

One tree of height 1 with B = sqrt(N) leaves (as many lists as the IVF default) per dataset, trained
as in :mod:`benchmarks.tree`. Float32 systems, compared at equal fraction scored:

* ``ehi-faiss``: the export (:class:`ehi.search.exported.ExportedIndex`), searched by FAISS alone
  (augmented queries, ``nprobe = beam``), as a user of the file would;
* ``faiss-ivf``: FAISS IVF-Flat with k-means lists.

Compressed systems, compared at equal Recall@100, all at 2 bits per dimension (ScaNN-AH's default
compression): ``ehi-pq4`` / ``ehi-pq8`` (the export with 4-bit fast-scan / 8-bit PQ codes),
``faiss-ivfpq4`` / ``faiss-ivfpq8`` (IVF-PQ on the IVF-Flat index's k-means lists, residual codes),
each also with ``-rr`` (the best ``RERANK`` re-scored exactly), and ``scann-ah`` (anisotropic
hashing, 1,000 re-scored). Curves and timings come from :func:`benchmarks.search.run`.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from ehi.search.exported import ExportedIndex
from ehi.search.faiss_pq import IVFPQSearcher, default_pq_m

from benchmarks import search, systems

FLOAT = ("ehi-faiss", "faiss-ivf")
EHI_PQ = ("ehi-pq4", "ehi-pq4-rr", "ehi-pq8", "ehi-pq8-rr")
IVF_PQ = ("faiss-ivfpq4", "faiss-ivfpq4-rr", "faiss-ivfpq8", "faiss-ivfpq8-rr")
SYSTEMS = FLOAT + EHI_PQ + IVF_PQ + ("scann-ah",)
RERANK = 1000  # as scann-ah's reorder_k in the benchmark


def codes(name: str) -> dict:
    """PQ settings of a compressed system's name (sub-quantizers: 2 bits per dimension)."""
    return {"nbits": 4 if "pq4" in name else 8, "rerank": RERANK if name.endswith("-rr") else 0}


class Builder:
    """``build(name, docs, tree)`` for :func:`benchmarks.search.run`, sharing the costly parts
    between systems: the tree's leaf assignment, IVF-Flat's k-means lists for IVF-PQ, and each
    code book between a system and its ``-rr`` twin (the twin only adds the exact vectors)."""

    def __init__(self):
        self.leaf, self.centroids, self.codes = None, None, {}

    def __call__(self, name: str, docs: np.ndarray, tree):
        start = time.perf_counter()
        base = name.removesuffix("-rr")
        if name in EHI_PQ + IVF_PQ:
            if base not in self.codes:
                self.codes[base] = self._codes(base, docs, tree)
            searcher = self.codes[base]
            searcher = searcher.reranked(docs, RERANK) if name.endswith("-rr") else searcher
        elif name == "ehi-faiss":
            searcher = ExportedIndex.from_leaves(tree, docs, self._leaf(docs, tree))
        else:
            searcher, _ = systems.build(name, docs, tree)
            if name == "faiss-ivf":
                self.centroids = searcher.quantizer.reconstruct_n(0, searcher.index.nlist)
        return searcher, time.perf_counter() - start

    def _leaf(self, docs, tree):
        if self.leaf is None:
            self.leaf = tree.assign_leaves(docs)
        return self.leaf

    def _codes(self, base: str, docs: np.ndarray, tree):
        nbits = codes(base)["nbits"]
        if base in EHI_PQ:
            return ExportedIndex.from_leaves(tree, docs, self._leaf(docs, tree), pq_m=default_pq_m(docs.shape[1], nbits),
                                             nbits=nbits)
        if self.centroids is None:
            ivf = systems.build("faiss-ivf", docs)[0]
            self.centroids = ivf.quantizer.reconstruct_n(0, ivf.index.nlist)
        return IVFPQSearcher.build(docs, centroids=self.centroids, nbits=nbits)


def run(dataset: str, docs: np.ndarray, queries: np.ndarray, names=SYSTEMS, **kwargs) -> pd.DataFrame:
    """The curves of ``names`` on one dataset (keywords: those of :func:`benchmarks.search.run`)."""
    return search.run(dataset, docs, queries, names=[n for n in SYSTEMS if n in names], height=1,
                      build=Builder(), **kwargs)


def matched(curves: pd.DataFrame) -> pd.DataFrame:
    """Every system's values at each target fraction scored and each target recall (long format)."""
    rows = []
    cols = ["qps", "p50_ms", "p99_ms", "frac_scored", "recall"]
    for dataset, data in curves.groupby("dataset", sort=False):
        for name, curve in data.groupby("system", sort=False):
            curve = search._monotone(curve)
            for kind, targets in (("frac_scored", search.FRAC_TARGETS), ("recall", search.RECALL_TARGETS)):
                for target in targets:
                    v = search._interp(curve, kind, target, cols, log_x=kind == "frac_scored")
                    rows.append({"dataset": dataset, "n_docs": int(data.n_docs.iloc[0]), "matched_at": kind,
                                 "target": target, "system": name, **v})
    return pd.DataFrame(rows)
