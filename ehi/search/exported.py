"""An exported EHI index on disk and in use: FILE (FAISS), FILE.json (how to use it), and for
height >= 2 FILE.router.safetensors (EHI's routing in numpy).

FILE is a drop-in FAISS index of the embeddings' dimension (an ``IndexPreTransform`` that appends
the routing coordinate, :func:`ehi.search.export.drop_in`): ``faiss.read_index(FILE).search(q, k)``
with ``nprobe`` = beam is EHI's search for a tree of height 1. Loading checks every file against
the others before the index is used (a FAISS file of another dimension, a JSON with no id map, a
router of another tree) and names the file at fault. :class:`ExportedIndex` follows the
:mod:`ehi.search.base` contract with the beam as budget: for height 1 it searches with FAISS alone
(``nprobe = beam``), as a user of the file would; for height >= 2 the numpy router picks the leaves
and FAISS scans them (``search_preassigned``).
"""

from __future__ import annotations

import os
from pathlib import Path

import faiss
import numpy as np

from ehi.search.base import Searcher, SearchResult, as_matrix, factory_string, log_grid, pad_results
from ehi.search.export import augment, build_leaf_ivf, drop_in
from ehi.search.faiss_ann import ivf_list_sizes
from ehi.search.faiss_pq import with_refine
from ehi.search.export_files import (FORMAT, FORMAT_VERSION, ExportError, meta_path, read_meta, read_router,
                                     router_path, verify_checksums, write_export)
from ehi.search.route import NumpyRouter

__all__ = ["ExportError", "ExportedIndex", "load_export", "meta_path", "router_path"]

# what an export opens at when nothing chose a beam: the index folder's own export, which every
# search reads at the beam it is asked for
NPROBE_UNSET = (1, "beam 1: none chosen; set it to the beam a search needs")


def _inner(index):
    """The padded-dimension index behind the query pre-transform: the IVF, or its IndexRefine."""
    return faiss.downcast_index(index.index) if isinstance(index, faiss.IndexPreTransform) else index


def _base_ivf(index):
    """The IVF inside the drop-in index (behind its pre-transform and any IndexRefine), downcast."""
    inner = _inner(index)
    base = faiss.downcast_index(inner.base_index) if isinstance(inner, faiss.IndexRefine) else inner
    return faiss.downcast_index(base)


class ExportedIndex(Searcher):
    """A FAISS IVF index over EHI's leaves plus its meta (doc ids, augmentation) and, for H >= 2, the router."""

    name = "ehi-faiss"
    budget_param = "beam"

    def __init__(self, index, meta: dict, router: NumpyRouter | None = None):
        super().__init__(index.ntotal, {k: meta.get(k) for k in ("height", "branching", "pq", "rerank")})
        self.index, self.meta, self.router = index, meta, router
        self.ivf = _base_ivf(index)
        inner = _inner(index)
        self.refine = inner if isinstance(inner, faiss.IndexRefine) else None
        self.quantizer = faiss.downcast_index(self.ivf.quantizer)
        self.dim, self.faiss_dim = int(meta["dim"]), int(meta["faiss_dim"])
        self.rerank = int(meta["rerank"] or 0)
        self.doc_ids = list(meta["doc_ids"])
        self.list_sizes = ivf_list_sizes(self.ivf)

    @classmethod
    def build(cls, ehi_index, doc_ids=None, pq_m: int | None = None, nbits: int = 4, rerank: int = 0,
              seed: int = 0, nprobe: tuple[int, str] = NPROBE_UNSET) -> "ExportedIndex":
        """Export an :class:`~ehi.search.tree_index.EHIIndex` (``doc_ids``: row -> id; default the row)."""
        docs = np.empty_like(ehi_index.doc_emb.numpy())
        docs[ehi_index.perm] = ehi_index.doc_emb.numpy()  # corpus order: FAISS ids are corpus rows
        return cls.from_leaves(ehi_index.indexer, docs, ehi_index.doc_leaf, doc_ids, pq_m, nbits, rerank, seed,
                               nprobe)

    @classmethod
    def from_leaves(cls, indexer, docs: np.ndarray, leaf: np.ndarray, doc_ids=None, pq_m: int | None = None,
                    nbits: int = 4, rerank: int = 0, seed: int = 0,
                    nprobe: tuple[int, str] = NPROBE_UNSET) -> "ExportedIndex":
        """The export of ``indexer``'s tree over ``docs`` (N, d), corpus order, in leaves ``leaf`` (N,);
        ``nprobe``: (the beam the file opens at, where it comes from in words)."""
        router = NumpyRouter.from_indexer(indexer)
        index = build_leaf_ivf(router, docs, leaf, pq_m, nbits, rerank, seed)
        _base_ivf(index).nprobe = int(nprobe[0])
        doc_ids = [str(i) for i in range(len(docs))] if doc_ids is None else [str(i) for i in doc_ids]
        if len(doc_ids) != len(docs):
            raise ExportError(f"{len(doc_ids)} document ids for an index of {len(docs)} documents")
        faiss_dim, height = int(_inner(index).d), indexer.height
        meta = {"format": FORMAT, "format_version": FORMAT_VERSION, "dim": router.dim, "faiss_dim": faiss_dim,
                "n_docs": len(docs), "n_leaves": router.n_leaves, "height": height,
                "branching": indexer.branching, "metric": "inner_product",
                "faiss_index": type(_base_ivf(index)).__name__, "rerank": int(rerank),
                "pq": None if pq_m is None else {"m": int(pq_m), "sub_quantizers": int(pq_m) + 1, "nbits": int(nbits)},
                "exact_in_faiss": height == 1, "routing": "faiss" if height == 1 else "router",
                "query_transform": f"the file's IndexPreTransform appends [1, 0 x {faiss_dim - router.dim - 1}] "
                                   f"to a query embedding ({router.dim} dims): search it with the embeddings as "
                                   "they are",
                "nprobe": int(nprobe[0]), "nprobe_source": f"nprobe = EHI's beam (leaves visited); {nprobe[1]}",
                "doc_ids": doc_ids}
        if height > 1:
            meta["note"] = ("height >= 2: FAISS's quantizer only approximates EHI's beam search (summed level "
                            "logits; the beam normalises each level by a softmax); route with the router file")
        return cls(index, meta, router if height > 1 else None)

    def reranked(self, docs: np.ndarray, rerank: int) -> "ExportedIndex":
        """The same lists and codes with the best ``rerank`` re-scored exactly against ``docs``
        (N, d), corpus order: shares this index, adds only the exact vectors."""
        if self.refine is not None:
            raise ValueError("this export already re-ranks")
        refined = drop_in(with_refine(_inner(self.index), as_matrix(docs), rerank), self.dim)
        refined.referenced_objects.append(self.index)  # the index that owns the IVF the re-ranking wraps
        return ExportedIndex(refined, {**self.meta, "rerank": int(rerank)}, self.router)

    def leaf_vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """The stored documents as the lists hold them, leaf after leaf: vectors (N, d) float32 and
        their corpus rows (N,); exact leaves only (the file that stores an index folder's vectors)."""
        if self.refine is not None or not isinstance(self.ivf, faiss.IndexIVFFlat):
            raise ExportError(f"a {type(self.ivf).__name__} export stores codes, not the documents' vectors")
        lists = self.ivf.invlists
        vectors = np.empty((self.n_docs, self.dim), dtype=np.float32)
        rows = np.empty(self.n_docs, dtype=np.int64)
        start = 0
        for leaf, size in enumerate(self.list_sizes):
            if size == 0:
                continue
            codes = faiss.rev_swig_ptr(lists.get_codes(leaf), int(size) * self.faiss_dim * 4)
            vectors[start : start + size] = np.frombuffer(codes, np.float32).reshape(-1, self.faiss_dim)[:, : self.dim]
            rows[start : start + size] = faiss.rev_swig_ptr(lists.get_ids(leaf), int(size))
            start += size
        return vectors, rows

    # -- query path --
    def checked(self, queries: np.ndarray) -> np.ndarray:
        """Queries (nq, d) float32 of the index's dimension."""
        queries = as_matrix(queries)
        if queries.shape[1] != self.dim:
            raise ExportError(f"queries have {queries.shape[1]} dimensions, the index expects {self.dim}")
        return queries

    def augment(self, queries: np.ndarray) -> np.ndarray:
        """``[q, 1, 0, ...]`` (nq, faiss_dim): what the pre-transform makes of a query, for the
        routed path that scans the IVF directly."""
        return augment(self.checked(queries), self.faiss_dim, 1.0)

    def route(self, aug: np.ndarray, beam: int) -> tuple[np.ndarray, np.ndarray]:
        """Leaves (nq, beam) and their routing scores: FAISS's quantizer (H = 1) or the router."""
        if not 1 <= beam <= self.ivf.nlist:
            raise ValueError(f"beam must be in 1..{self.ivf.nlist}, got {beam}")
        if self.router is None:
            scores, leaves = self.quantizer.search(aug, int(beam))
            return leaves, scores
        return self.router.beam_search(aug[:, : self.dim], int(beam))

    def routing_units(self, budget_value: int) -> int:
        """Height 1: FAISS's quantizer scores every leaf centroid; else the router's count."""
        return int(self.ivf.nlist) if self.router is None else self.router.routing_units(int(budget_value))

    def _k_base(self, k: int) -> int:
        return max(k, self.rerank) if self.refine is not None else k

    def search(self, queries: np.ndarray, k: int, budget_value: int) -> SearchResult:
        aug = self.augment(queries)
        leaves, coarse = self.route(aug, budget_value)
        n_scored = self.list_sizes[leaves].sum(axis=1)
        self.ivf.nprobe = leaves.shape[1]
        scores, rows = self.ivf.search_preassigned(aug, self._k_base(k), leaves, coarse.astype(np.float32))
        if self.refine is not None:
            scores, rows = self._rerank(aug, rows, k)
        return (*pad_results(rows, scores, k), n_scored.astype(np.int64))

    def _rerank(self, aug: np.ndarray, rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Exact scores of the candidates ``rows`` (nq, R) from the refine index; the best k."""
        exact = np.empty(rows.shape, dtype=np.float32)
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        flat = faiss.downcast_index(self.refine.refine_index)
        flat.compute_distance_subset(len(aug), faiss.swig_ptr(aug), rows.shape[1], faiss.swig_ptr(exact),
                                     faiss.swig_ptr(rows))  # -1 -> -inf
        order = np.argsort(-exact, axis=1, kind="stable")[:, :k]
        return np.take_along_axis(exact, order, axis=1), np.take_along_axis(rows, order, axis=1)

    def search_ids(self, queries, k, budget_value):
        if self.router is not None:
            rows, scores, _ = self.search(queries, k, budget_value)
            return rows, scores
        queries = self.checked(queries)  # FAISS alone, as a user of the file searches it
        ivf_params = faiss.SearchParametersIVF(nprobe=int(budget_value))
        inner = ivf_params if self.refine is None else faiss.IndexRefineSearchParameters(
            k_factor=(self._k_base(k) + 0.5) / k, base_index_params=ivf_params)
        params = faiss.SearchParametersPreTransform()
        params.index_params = inner
        scores, rows = self.index.search(queries, int(k), params=params)
        return pad_results(rows, scores, k)

    def default_sweep(self) -> list[int]:
        return log_grid(1, self.ivf.nlist, 20)

    # -- files --
    def faiss_index(self) -> str | None:
        """The index behind the query pre-transform (FAISS has no spelling for the transform that
        appends the routing coordinate), as the runs record it."""
        return factory_string(_inner(self.index))

    def write(self, path: str | os.PathLike) -> Path:
        """FILE, FILE.json and (height >= 2) FILE.router.safetensors (:mod:`ehi.search.export_files`),
        FILE at the nprobe its sidecar records (a search in between sets the IVF's own)."""
        if isinstance(self.meta.get("nprobe"), int):
            self.ivf.nprobe = self.meta["nprobe"]
        return write_export(self, path)


def load_export(path: str | os.PathLike, route_threads: int | None = 1) -> ExportedIndex:
    """Read an export written by :meth:`ExportedIndex.write`, checking that its files agree."""
    path = Path(path)
    if not path.is_file():
        raise ExportError(f"{path}: no such FAISS file")
    meta = read_meta(path)
    try:
        index = faiss.read_index(str(path))
    except RuntimeError as err:
        raise ExportError(f"{path}: not a readable FAISS index: {str(err).splitlines()[0]}") from None
    jpath = meta_path(path)
    if not isinstance(index, faiss.IndexPreTransform):
        raise ExportError(f"{path}: a {type(index).__name__}, not the IndexPreTransform an EHI export writes")
    if index.d != meta["dim"] or _inner(index).d != meta["faiss_dim"] or meta["faiss_dim"] <= meta["dim"]:
        raise ExportError(f"{path}: FAISS index of dimension {index.d} (inside {_inner(index).d}), but {jpath.name} "
                          f"says {meta['dim']}-dimensional queries (inside {meta['faiss_dim']})")
    if not isinstance(_base_ivf(index), faiss.IndexIVF) or _base_ivf(index).nlist != meta["n_leaves"]:
        raise ExportError(f"{path}: not an IVF index with {meta['n_leaves']} lists, as {jpath.name} says")
    if index.ntotal != meta["n_docs"] or len(meta["doc_ids"]) != index.ntotal:
        raise ExportError(f"{path}: {index.ntotal} vectors, but {jpath.name} has n_docs {meta['n_docs']} and "
                          f"{len(meta['doc_ids'])} doc ids")
    router = read_router(path, meta, route_threads) if meta["height"] > 1 else None
    verify_checksums(path, meta)
    return ExportedIndex(index, meta, router)
