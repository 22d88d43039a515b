"""ANNS baselines over any embedding matrix: FAISS flat / IVF / HNSW and ScaNN (brute force, AH).

Every searcher follows the contract of :mod:`ehi.search.base` (rows, scores, n_scored) and names
its budget knob, so one evaluation loop covers them all and EHI's own tree::

    s = build_searcher("faiss-ivf", doc_emb, nlist=64)
    for nprobe in s.default_sweep():
        rows, scores, n_scored = s.search(query_emb, 1000, nprobe)

A kind is the search half of a system name (DESIGN.md section 4): ``de+faiss-ivf`` is the DE
encoder's embeddings searched by the ``faiss-ivf`` kind.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from ehi.search.base import Searcher, SearchResult, log_grid
from ehi.search.faiss_ann import FlatSearcher, HNSWSearcher, IVFSearcher, read_faiss
from ehi.search.faiss_pq import IVFPQSearcher
from ehi.search.scann_ann import ScannSearcher

KINDS = ("exact", "faiss-ivf", "faiss-hnsw", "scann", "scann-ah", "faiss-ivfpq")

_FAISS = {"exact": FlatSearcher, "faiss-ivf": IVFSearcher, "faiss-hnsw": HNSWSearcher, "faiss-ivfpq": IVFPQSearcher}


def build_searcher(kind: str, emb: np.ndarray, **params) -> Searcher:
    """Build the ``kind`` index over ``emb`` (N, d); ``params`` are that builder's keywords.

    Unknown keywords fail loudly (a typo in a config must not silently build the default index).
    """
    if kind in _FAISS:
        return _FAISS[kind].build(emb, **params)
    if kind in ("scann", "scann-ah"):
        return ScannSearcher.build(emb, scoring="ah" if kind == "scann-ah" else "bf", **params)
    raise ValueError(f"unknown ANNS kind {kind!r}; known: {KINDS}")


def load_searcher(path: str | os.PathLike) -> Searcher:
    """Load an index directory written by :meth:`Searcher.save`."""
    path = Path(path)
    meta = json.loads((path / "params.json").read_text())
    kind = meta["kind"]
    if kind in _FAISS:
        return _FAISS[kind](read_faiss(path), meta["params"])
    if kind in ("scann", "scann-ah"):
        return ScannSearcher.load(path)
    raise ValueError(f"{path}: unknown ANNS kind {kind!r}")


__all__ = [
    "KINDS",
    "FlatSearcher",
    "HNSWSearcher",
    "IVFPQSearcher",
    "IVFSearcher",
    "ScannSearcher",
    "Searcher",
    "SearchResult",
    "build_searcher",
    "load_searcher",
    "log_grid",
]
