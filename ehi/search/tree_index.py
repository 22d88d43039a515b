"""EHI's search index: documents grouped by leaf (like IVF inverted lists) plus the learned tree.

Search routes each query down the tree with beam search, scores every document of the visited
leaves exactly (inner product) and keeps the top k. Documents are stored sorted by leaf, so a
leaf's documents are one contiguous slice ``offsets[leaf]:offsets[leaf + 1]`` (CSR); ``perm``
maps a sorted position back to the corpus row. On disk: ``index.safetensors`` + ``index.json``
next to the tree's ``indexer.safetensors`` + ``indexer.json``: no pickle, no training code.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import save_file

from ehi.core.errors import SearchIndexError
from ehi.core.io import atomic_dir, read_json_object
from ehi.core.weights import read_tensors
from ehi.model.tree import TreeIndexer, check_leaves_fit, load_indexer

FORMAT_VERSION = 1
DTYPES = {"doc_emb": torch.float32, "offsets": torch.int64, "perm": torch.int64}  # as EHIIndex.save writes


def check_values(tensors: dict[str, torch.Tensor], path: Path) -> None:
    """The dtypes :meth:`EHIIndex.save` writes and finite embeddings: an integer or NaN embedding
    would be cast or scored without an error, and every score would then be wrong."""
    wrong = [f"{k} is {tensors[k].dtype}, expected {want}" for k, want in DTYPES.items() if tensors[k].dtype != want]
    if wrong:
        raise SearchIndexError(f"{path}: " + "; ".join(wrong))
    bad_rows = (~torch.isfinite(tensors["doc_emb"])).reshape(len(tensors["doc_emb"]), -1).any(1)
    if bad_rows.any():
        raise SearchIndexError(f"{path}: {int(bad_rows.sum())} of {len(bad_rows)} document embeddings hold NaN or inf")


class EHIIndex:
    """Leaf-sorted document embeddings + CSR leaf offsets + the tree that routes queries."""

    def __init__(self, indexer: TreeIndexer, doc_emb: np.ndarray, offsets: np.ndarray, perm: np.ndarray):
        self.indexer = indexer.eval()
        self.doc_emb = torch.as_tensor(np.ascontiguousarray(doc_emb, dtype=np.float32))  # (N, d) by leaf
        self.offsets = np.asarray(offsets, dtype=np.int64)  # (L + 1,)
        self.perm = np.asarray(perm, dtype=np.int64)  # (N,) sorted position -> corpus row

    @classmethod
    def build(cls, doc_emb: np.ndarray, indexer: TreeIndexer, batch_size: int = 4096) -> "EHIIndex":
        """Assign each document (N, d) to its argmax leaf and group the documents by leaf."""
        doc_emb = np.asarray(doc_emb, dtype=np.float32)
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

    def search(self, query_emb: np.ndarray, beam: int, k: int, batch_size: int = 256,
               max_gather: int = 1 << 26) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Top-k documents of each query (nq, d) among the leaves its beam visits.

        Returns rows (nq, k) int64 corpus row positions (-1 pads queries with fewer candidates),
        scores (nq, k) float32 (-inf where padded) and n_scored (nq,) int64, the number of documents
        scored = the summed sizes of the visited leaves. ``max_gather`` bounds the floats gathered
        at once (queries x candidates x dim), which bounds memory for large beams.
        """
        query_emb = np.asarray(query_emb, dtype=np.float32)
        nq = len(query_emb)
        rows = np.full((nq, k), -1, dtype=np.int64)
        scores = np.full((nq, k), -np.inf, dtype=np.float32)
        n_scored = np.zeros(nq, dtype=np.int64)
        for start in range(0, nq, batch_size):
            q = torch.as_tensor(query_emb[start : start + batch_size])
            leaves = self.indexer.beam_search(q, beam)[0].cpu().numpy()  # (nb, beam)
            cand, count = self._candidates(leaves)  # (nb, C), (nb,)
            n_scored[start : start + len(q)] = count
            step = max(1, max_gather // max(1, cand.shape[1] * self.doc_emb.shape[1]))
            for s in range(0, len(q), step):
                r, sc = self._score(q[s : s + step], cand[s : s + step], k)
                rows[start + s : start + s + len(r), : r.shape[1]] = r
                scores[start + s : start + s + len(r), : r.shape[1]] = sc
        return rows, scores, n_scored

    def _candidates(self, leaves: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Sorted positions of all documents in each query's visited leaves, padded with -1.

        leaves (nb, b) -> candidates (nb, C) with C = the largest per-query count, counts (nb,).
        Built with repeat/cumsum over (query, leaf) segments: no Python loop per query.
        """
        starts = self.offsets[leaves].ravel()  # (nb*b,)
        lens = self.leaf_sizes[leaves].ravel()  # (nb*b,)
        counts = lens.reshape(leaves.shape).sum(1)  # (nb,)
        total = int(lens.sum())
        seg_first = np.cumsum(lens) - lens  # flat index of each segment's first candidate
        flat_pos = np.repeat(starts - seg_first, lens) + np.arange(total)  # (total,)
        row_first = np.cumsum(counts) - counts
        row = np.repeat(np.arange(len(leaves)), counts)
        col = np.arange(total) - np.repeat(row_first, counts)
        cand = np.full((len(leaves), max(1, int(counts.max(initial=0)))), -1, dtype=np.int64)
        cand[row, col] = flat_pos
        return cand, counts

    def _score(self, q: torch.Tensor, cand: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Exact inner products of q (nb, d) with its candidates (nb, C); top-k rows and scores."""
        idx = torch.as_tensor(cand)
        emb = self.doc_emb[idx.clamp(min=0)]  # (nb, C, d)
        # multiply-and-sum rather than bmm: each score then sums over d in one fixed order, so it
        # does not depend on which other queries share the batch (bmm's kernel choice does)
        s = (emb * q[:, None, :]).sum(-1)  # (nb, C)
        s = s.masked_fill(idx < 0, float("-inf"))
        top_s, top_i = s.topk(min(k, s.shape[1]), dim=1)  # (nb, k')
        pos = idx.gather(1, top_i).numpy()
        rows = np.where(pos >= 0, self.perm[np.maximum(pos, 0)], -1)
        return rows, top_s.numpy()

    def save(self, out_dir: str | os.PathLike) -> Path:
        """Write the index directory atomically (a crash leaves the old one or none)."""
        with atomic_dir(out_dir) as tmp:
            tensors = {"doc_emb": self.doc_emb, "offsets": torch.as_tensor(self.offsets),
                       "perm": torch.as_tensor(self.perm)}
            save_file(tensors, str(tmp / "index.safetensors"))
            self.indexer.save(tmp)
            meta = {"format_version": FORMAT_VERSION, "n_docs": self.n_docs, "dim": int(self.doc_emb.shape[1]),
                    "n_leaves": int(len(self.leaf_sizes)), "indexer": self.indexer.config()}
            (tmp / "index.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
        return Path(out_dir)

    @classmethod
    def load(cls, in_dir: str | os.PathLike) -> "EHIIndex":
        src = Path(in_dir)
        meta = read_json_object(src / "index.json", SearchIndexError)
        if meta.get("format_version") != FORMAT_VERSION:
            raise SearchIndexError(f"{src}: index format {meta.get('format_version')}, expected {FORMAT_VERSION}")
        t = read_tensors(src / "index.safetensors")
        missing = sorted({"doc_emb", "offsets", "perm"} - t.keys())
        if missing:
            raise SearchIndexError(f"{src / 'index.safetensors'}: missing tensor(s) {missing}")
        check_values(t, src / "index.safetensors")
        index = cls(load_indexer(src), t["doc_emb"].numpy(), t["offsets"].numpy(), t["perm"].numpy())
        index.check_consistent(src)
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
