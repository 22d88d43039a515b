"""EHI's search index: documents grouped by leaf (like IVF inverted lists) plus the learned tree.

Search routes each query down the tree with beam search, scores every document of the visited
leaves exactly (inner product) and keeps the top k; it runs in FAISS (:meth:`EHIIndex.searcher`),
torch only trains the tree and assigns the documents. Documents are stored sorted by leaf, so a
leaf's documents are one contiguous slice ``offsets[leaf]:offsets[leaf + 1]`` (CSR); ``perm``
maps a sorted position back to the corpus row. On disk the documents are stored once, in the
index's FAISS export ``index.faiss`` (+ ``.json``, ``.router.safetensors``;
:mod:`ehi.search.exported`): its inverted lists are the leaves, its ids the corpus rows, and
``faiss.read_index`` alone searches it with the queries' own dimension. Beside it ``index.json``
and the tree's ``indexer.safetensors`` + ``indexer.json``. Every search loads the export as
written: no pickle, no training code, nothing rebuilt per search; :meth:`EHIIndex.load` reads the
leaf-sorted arrays back from its lists.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import numpy as np
import torch
from ehi.core.errors import SearchIndexError
from ehi.core.io import atomic_dir, read_json_object
from ehi.model.tree import TreeIndexer, check_leaves_fit, load_indexer
from ehi.search.query_args import checked_search
from ehi.search.route import NumpyRouter

# this layout: the documents in index.faiss alone; an index folder of another version is refused
FORMAT_VERSION = 2
EXPORT_FILE = "index.faiss"  # the FAISS export in the index folder, beside its sidecar and router


def check_finite(doc_emb: np.ndarray, where) -> None:
    """Finite embeddings: a NaN or infinite one would be scored without an error, and every score
    would then be wrong."""
    bad_rows = ~np.isfinite(doc_emb).all(axis=1)
    if bad_rows.any():
        raise SearchIndexError(f"{where}: {int(bad_rows.sum())} of {len(bad_rows)} document embeddings hold NaN or inf")


def check_nonzero_rows(doc_emb: np.ndarray, where) -> None:
    """Every document embedding has a non-zero norm: a zero row scores 0 against every query, so
    such documents tie everywhere and fill the hits in arbitrary order."""
    zero = ~doc_emb.any(axis=1)
    if zero.any():
        raise SearchIndexError(f"{where}: {int(zero.sum())} of {len(zero)} document embeddings are all zero "
                               f"(first at row {int(zero.argmax())}); the encoder embeds every text to a unit vector")


class EHIIndex:
    """Leaf-sorted document embeddings + CSR leaf offsets + the tree that routes queries."""

    def __init__(self, indexer: TreeIndexer, doc_emb: np.ndarray, offsets: np.ndarray, perm: np.ndarray):
        self.indexer = indexer.eval()
        self.doc_emb = torch.as_tensor(np.ascontiguousarray(doc_emb, dtype=np.float32))  # (N, d) by leaf
        self.offsets = np.asarray(offsets, dtype=np.int64)  # (L + 1,)
        self.perm = np.asarray(perm, dtype=np.int64)  # (N,) sorted position -> corpus row
        self._searcher = None  # the exact search of these leaves: the folder's export, or built on first use

    @classmethod
    def build(cls, doc_emb: np.ndarray, indexer: TreeIndexer, batch_size: int = 4096) -> "EHIIndex":
        """Assign each document (N, d) to its argmax leaf and group the documents by leaf."""
        doc_emb = np.asarray(doc_emb, dtype=np.float32)
        check_finite(doc_emb, "document embeddings")
        check_nonzero_rows(doc_emb, "document embeddings")
        check_leaves_fit(indexer.n_leaves, len(doc_emb), indexer.height, indexer.branching)
        leaf = indexer.assign_leaves(doc_emb, batch_size)  # (N,)
        perm = np.argsort(leaf, kind="stable")
        offsets = np.concatenate([[0], np.cumsum(np.bincount(leaf, minlength=indexer.n_leaves))])
        return cls(copy.deepcopy(indexer).cpu(), doc_emb[perm], offsets, perm)  # copy: leave the caller's device alone

    @property
    def n_docs(self) -> int:
        return int(self.perm.shape[0])

    @property
    def leaf_sizes(self) -> np.ndarray:
        return np.diff(self.offsets)  # (L,)

    @property
    def doc_leaf(self) -> np.ndarray:
        """Leaf of each document in corpus order, (N,)."""
        out = np.empty(self.n_docs, dtype=np.int64)
        out[self.perm] = np.repeat(np.arange(len(self.leaf_sizes)), self.leaf_sizes)
        return out

    def searcher(self, **export):
        """This index as a :class:`~ehi.search.base.Searcher`: EHI's leaves as the inverted lists of a
        FAISS IVF index, routed by the tree (:class:`~ehi.search.exported.ExportedIndex`; ``export``:
        its PQ and re-ranking keywords). The one search path of every EHI index: the pipeline's
        ``ehi+tree`` / ``ehi+tree-pq``, ``ehi search``, the export and the benchmarks."""
        from ehi.search.exported import ExportedIndex

        return ExportedIndex.build(self, **export)

    def search(self, query_emb: np.ndarray, beam: int, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Top-k documents of each query (nq, d) among the leaves its beam visits, through
        :meth:`searcher` (the folder's export for a loaded index; for one built in memory, the
        searcher built on the first call; then kept).

        The queries, ``beam`` and ``k`` are checked first, as every search surface checks them
        (:func:`ehi.search.query_args.checked_search`): a NaN, infinite, all-zero or overflowing row,
        an integer array, a wrong width, a beam that is no integer in 1..leaves or a k below 1 is
        a :class:`SearchIndexError`; a k above the corpus size is capped at it, with a warning.

        Returns rows (nq, k) int64 corpus row positions (-1 pads queries with fewer candidates),
        scores (nq, k) float32 exact inner products (-inf where padded) and n_scored (nq,) int64,
        the number of documents scored = the summed sizes of the visited leaves.
        """
        query_emb, beam, k = checked_search(query_emb, beam, k, dim=self.indexer.dim, n_docs=self.n_docs,
                                            n_leaves=self.indexer.n_leaves)
        return self._kept_searcher().search(query_emb, k, beam)

    def routing_units(self, beam: int) -> int:
        """Router inner products one query's search at ``beam`` computes (:mod:`ehi.core.work`)."""
        return self._kept_searcher().routing_units(beam)

    def _kept_searcher(self):
        if self._searcher is None:
            self._searcher = self.searcher()
        return self._searcher

    def save(self, out_dir: str | os.PathLike) -> Path:
        """Write the index directory atomically (a crash leaves the old one or none): the tree and
        the FAISS export (:data:`EXPORT_FILE`, exact leaves, ids = corpus rows), which holds the
        documents (a loaded index writes the export it was loaded with, nothing rebuilt)."""
        with atomic_dir(out_dir) as tmp:
            self._kept_searcher().write(tmp / EXPORT_FILE)
            self.indexer.save(tmp)
            meta = {"format_version": FORMAT_VERSION, "n_docs": self.n_docs, "dim": int(self.doc_emb.shape[1]),
                    "n_leaves": int(len(self.leaf_sizes)), "indexer": self.indexer.config()}
            (tmp / "index.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
        return Path(out_dir)

    @staticmethod
    def check_version(in_dir: str | os.PathLike) -> None:
        """Refuse, in one line, a folder of another layout or one without its FAISS export."""
        src = Path(in_dir)
        meta = read_json_object(src / "index.json", SearchIndexError)
        if meta.get("format_version") != FORMAT_VERSION:
            raise SearchIndexError(f"{src}: index format {meta.get('format_version')}, this ehi reads format "
                                   f"{FORMAT_VERSION} (the documents stored once, in {EXPORT_FILE}); build the index "
                                   "again (snakemake --forcerun ehi_index, or ehi.fit_tree)")
        if not (src / EXPORT_FILE).is_file():
            raise SearchIndexError(f"{src / EXPORT_FILE}: missing (the index's documents and leaves)")

    @classmethod
    def load(cls, in_dir: str | os.PathLike) -> "EHIIndex":
        """An index folder written by :meth:`save`: the tree, and the leaf-sorted documents read
        from the lists of its FAISS export, which then serves every search."""
        from ehi.search.exported import load_export

        src = Path(in_dir)
        cls.check_version(src)
        indexer = load_indexer(src)
        try:  # finite weights can still overflow float32 once routed: fold them here, where the file is known
            NumpyRouter.from_indexer(indexer)
        except SearchIndexError as err:
            raise SearchIndexError(f"{src / 'indexer.safetensors'}: {err}") from None
        export = load_export(src / EXPORT_FILE)
        doc_emb, perm = export.leaf_vectors()
        offsets = np.concatenate([[0], np.cumsum(export.list_sizes)])
        index = cls(indexer, doc_emb, offsets, perm)
        index.check_consistent(src / EXPORT_FILE)
        index._searcher = export
        return index

    def check_consistent(self, where) -> None:
        """Raise :class:`SearchIndexError` unless embeddings, offsets, permutation and tree agree:
        (N, d) embeddings with d the tree's input, B^H + 1 offsets rising from 0 to N, a permutation
        of the N rows (otherwise a search returns wrong documents or fails half-way)."""
        n_leaves, problems = self.indexer.n_leaves, []
        if self.doc_emb.ndim != 2 or self.doc_emb.shape[1] != self.indexer.dim:
            problems.append(f"embeddings of shape {tuple(self.doc_emb.shape)}, the tree takes dimension {self.indexer.dim}")
        if self.offsets.shape != (n_leaves + 1,):
            problems.append(f"{len(self.offsets)} leaf offsets for a tree of {n_leaves} leaves (need {n_leaves + 1})")
        elif self.offsets[0] != 0 or (np.diff(self.offsets) < 0).any() or self.offsets[-1] != len(self.doc_emb):
            problems.append(f"leaf offsets must rise from 0 to the {len(self.doc_emb)} documents, "
                            f"got {self.offsets[:3].tolist()}...{self.offsets[-2:].tolist()}")
        if self.perm.shape != (len(self.doc_emb),) or not np.array_equal(np.sort(self.perm), np.arange(len(self.perm))):
            problems.append(f"the document order is not a permutation of the {len(self.doc_emb)} documents")
        if problems:
            raise SearchIndexError(f"{where}: inconsistent index: " + "; ".join(problems))
