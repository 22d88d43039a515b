"""EHI routes, FAISS scans: EHI's tree picks the leaves, FAISS scores the documents in them.

:class:`ehi.search.tree_index.EHIIndex` scores the visited leaves with torch: it gathers every candidate's
vector into a (queries, candidates, d) block and multiplies. That copy costs as much memory
traffic as the scan itself. Once documents are contiguous per leaf, the scan is exactly what an
IVF-Flat index does with its inverted lists, so :class:`ScanIndex` stores EHI's leaves *as* the
inverted lists of a ``faiss.IndexIVFFlat`` (one list per leaf, ids = corpus rows) and hands the
leaves of EHI's beam search to ``search_preassigned``. FAISS's coarse quantizer is never used.

Same contract as EHIIndex.search (and :mod:`ehi.search.base`): rows (nq, k) corpus rows with -1
padding, scores (nq, k) float32 with -inf padding, n_scored (nq,) = the summed sizes of the visited
leaves. tests/test_scan.py checks that both paths return the same results.
"""

from __future__ import annotations

import contextlib

import faiss
import numpy as np
import torch
from faiss.contrib.ivf_tools import add_preassigned

from ehi.search.base import Searcher, SearchResult, as_matrix, log_grid, pad_results
from ehi.search.tree_index import EHIIndex
from ehi.model.tree import TreeIndexer


@contextlib.contextmanager
def torch_threads(threads: int | None):
    """Run the block with ``threads`` torch intra-op threads (None: leave the setting alone)."""
    before = torch.get_num_threads()
    if threads:
        torch.set_num_threads(int(threads))
    try:
        yield
    finally:
        torch.set_num_threads(before)


class ScanIndex(Searcher):
    """EHI's tree (routing) + an IVF-Flat index whose inverted lists are EHI's leaves (scan).

    ``route_threads``: torch threads for the tree's passes (leaf assignment, beam search); None
    keeps torch's global setting. Routing a batch is a few (n, d) x (d, d') products: one thread is
    already fast (~15 us a query at d = d' = 384), and torch's intra-op pool can cost far more than
    it saves, badly so when other processes share the cores (its barriers wait for descheduled
    threads). The scan's threads are faiss's (``set_threads``).
    """

    name = "ehi-scan"
    budget_param = "beam"

    def __init__(self, indexer: TreeIndexer, ivf: faiss.IndexIVFFlat, leaf_sizes: np.ndarray,
                 route_threads: int | None = None):
        super().__init__(ivf.ntotal, {"height": indexer.height, "branching": indexer.branching})
        self.indexer = indexer.eval()
        self.ivf = ivf
        self.leaf_sizes = np.asarray(leaf_sizes, dtype=np.int64)  # (L,)
        self.route_threads = route_threads

    @classmethod
    def build(cls, doc_emb: np.ndarray, indexer: TreeIndexer, batch_size: int = 4096,
              route_threads: int | None = None) -> "ScanIndex":
        """Assign each document (N, d) to its argmax leaf (one forward pass) and fill the lists."""
        doc_emb = as_matrix(doc_emb)
        with torch_threads(route_threads):
            leaf = indexer.assign_leaves(doc_emb, batch_size)  # (N,)
        index = cls._from_leaves(indexer, doc_emb, leaf, np.arange(len(doc_emb), dtype=np.int64))
        index.route_threads = route_threads
        return index

    @classmethod
    def from_index(cls, index: EHIIndex) -> "ScanIndex":
        """The same index as an EHIIndex, without re-routing the documents."""
        leaf = np.repeat(np.arange(len(index.leaf_sizes), dtype=np.int64), index.leaf_sizes)  # sorted order
        return cls._from_leaves(index.indexer, index.doc_emb.numpy(), leaf, index.perm)

    @classmethod
    def _from_leaves(cls, indexer: TreeIndexer, emb: np.ndarray, leaf: np.ndarray, ids: np.ndarray) -> "ScanIndex":
        emb = as_matrix(emb)
        dim, n_leaves = emb.shape[1], indexer.n_leaves
        quantizer = faiss.IndexFlatIP(dim)  # required by the constructor; routing never asks it
        ivf = faiss.IndexIVFFlat(quantizer, dim, n_leaves, faiss.METRIC_INNER_PRODUCT)
        ivf.is_trained = True  # nothing to train: the lists are given (the wrapper keeps quantizer alive)
        leaf = np.ascontiguousarray(leaf, dtype=np.int64)
        ids = np.ascontiguousarray(ids, dtype=np.int64)
        add_preassigned(ivf, emb, leaf, ids)  # (N, d) into the given lists, ids = corpus rows
        sizes = np.bincount(leaf, minlength=n_leaves)
        return cls(indexer, ivf, sizes)

    @property
    def n_leaves(self) -> int:
        return int(self.ivf.nlist)

    def route(self, queries: np.ndarray, beam: int) -> tuple[np.ndarray, np.ndarray]:
        """EHI's beam search: the ``beam`` leaves of each query (nq, beam) and their log-probabilities."""
        with torch.inference_mode(), torch_threads(self.route_threads):
            leaves, logp = self.indexer.beam_search(torch.from_numpy(as_matrix(queries)), int(beam))
        return leaves.cpu().numpy().astype(np.int64), logp.cpu().numpy().astype(np.float32)

    def search(self, queries: np.ndarray, k: int, budget_value: int) -> SearchResult:
        """Top-k rows and scores of each query among its beam's leaves, and n_scored (nq,)."""
        queries = as_matrix(queries)
        leaves, logp = self.route(queries, budget_value)
        n_scored = self.leaf_sizes[leaves].sum(axis=1)
        # coarse scores are only read by residual encodings (not IVF-Flat); pass the path log-probs
        self.ivf.nprobe = leaves.shape[1]  # search_preassigned checks the width against nprobe
        scores, rows = self.ivf.search_preassigned(queries, int(k), leaves, logp)
        return (*pad_results(rows, scores, k), n_scored.astype(np.int64))

    def search_ids(self, queries, k, budget_value):
        rows, scores, _ = self.search(queries, k, budget_value)
        return rows, scores

    def default_sweep(self) -> list[int]:
        return log_grid(1, self.n_leaves, 20)

    def set_threads(self, threads: int) -> None:
        """Threads of the scan (faiss's OpenMP pool); routing follows ``route_threads``."""
        faiss.omp_set_num_threads(int(threads))
