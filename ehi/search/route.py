"""EHI's beam search in numpy: the trained tree's routing without torch on the query path.

At level h the child logits of parent p for an input x are (:mod:`ehi.model.tree`)
``W_z (U x + b_U) + b_W + W_p[:, p]`` (+ ``Delta_h[p] (U x + b_U)`` for ``per_node`` trees). The
part shared by all parents is affine in x, so it folds into one matrix per level,
``A_h = W_z U`` (B, d) and ``c_h = W_z b_U + b_W`` (B,): routing a batch costs one (n, d) x
(d, H*B) product for all levels at once, instead of the (d x hidden) and (hidden x B) products
per level that the torch module runs. What depends on the parent is a gathered bias (and, per
node, a small (B, hidden) product). The beam search then keeps the ``beam`` most probable nodes
per level exactly as :meth:`TreeIndexer.beam_search` does.

The folded weights are numpy arrays saved with safetensors (no pickle, no torch needed to read).
Matrix products run on ``threads`` BLAS threads, one by default: routing a batch is small work, and
a BLAS pool on a shared machine costs more than it saves (its barriers wait for descheduled threads).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file, save_file

from ehi.core.errors import SearchIndexError
from ehi.core.work import tree_routing_units


BLAS_LIMIT_FROM = 64  # queries per call from which the BLAS thread limit is set
SORT_ALL_UP_TO = 512  # candidate columns (beam x B) up to which _top_sorted sorts whole rows
_CONTROLLER = []  # one threadpoolctl controller: finding the loaded BLAS libraries costs ~ms, once


def _blas_threads(threads: int | None):
    """A context that limits BLAS to ``threads`` threads (None: leave the setting alone)."""
    if not threads:
        return contextlib.nullcontext()
    if not _CONTROLLER:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0].limit(limits=int(threads), user_api="blas")


class NumpyRouter:
    """The tree's routing weights, folded per level; ``beam_search`` matches the torch module's."""

    def __init__(self, weights: dict[str, np.ndarray], height: int, branching: int, threads: int | None = 1):
        self.height, self.branching, self.threads = int(height), int(branching), threads
        with np.errstate(over="ignore"):  # a weight past float32's range becomes inf, which check_range names
            self.weights = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in weights.items()}
        w = self.weights
        self.A_all = np.concatenate([w[f"A.{h}"] for h in range(height)], axis=0)  # (H*B, d)
        self.c_all = np.concatenate([w[f"c.{h}"] for h in range(height)])  # (H*B,)
        self.per_node = "delta.0" in w
        self.dim = int(self.A_all.shape[1])
        self.check_range()

    def check_range(self) -> None:
        """Refuse weights whose logits could overflow float32 for a unit-norm query: a bound on
        |A x + c + parent| per level (doubled by the log-softmax's shift, summed over the levels)
        must stay below float32's largest value, or the beam would rank inf and NaN paths."""
        limit = float(np.finfo(np.float32).max)
        bad = [k for k, v in self.weights.items() if not np.isfinite(v).all()]
        if bad:
            raise SearchIndexError(f"routing weights {', '.join(sorted(bad))} hold NaN or inf (after folding to float32)")
        w = {k: v.astype(np.float64) for k, v in self.weights.items()}  # the bound itself must not overflow
        bound = 0.0
        for h in range(self.height):
            row = np.linalg.norm(w[f"A.{h}"], axis=1) + np.abs(w[f"c.{h}"])
            level = float(row.max() + np.abs(w[f"parent.{h}"]).max())
            if self.per_node:  # |delta . z| <= sum|delta| ||z||, ||z|| <= ||U||_F + ||b||
                z = np.linalg.norm(w[f"U.{h}"]) + np.linalg.norm(w[f"U_bias.{h}"])
                level += float(np.abs(w[f"delta.{h}"]).sum(axis=-1).max() * z)
            bound += 2 * level
        if not bound < limit:
            raise SearchIndexError(f"routing weights too large: tree logits reach {bound:.3g} for a unit-norm query, "
                                   f"beyond float32's {limit:.3g} (the beam would rank inf and NaN paths)")

    @classmethod
    def from_indexer(cls, indexer, threads: int | None = 1) -> "NumpyRouter":
        """Fold a :class:`~ehi.model.tree.TreeIndexer`'s weights (torch is needed here only)."""
        weights = {}
        for h in range(indexer.height):
            n_parent = indexer.branching**h
            u_w = indexer.U[h].weight.detach().double().cpu().numpy()  # (hidden, d)
            u_b = indexer.U[h].bias.detach().double().cpu().numpy()  # (hidden,)
            w = indexer.W[h].weight.detach().double().cpu().numpy()  # (B, B^h + hidden)
            w_z, w_b = w[:, n_parent:], indexer.W[h].bias.detach().double().cpu().numpy()
            weights[f"A.{h}"] = w_z @ u_w  # (B, d), folded in float64 then stored as float32
            weights[f"c.{h}"] = w_z @ u_b + w_b  # (B,)
            weights[f"parent.{h}"] = w[:, :n_parent].T  # (B^h, B): the one-hot column of each parent
            if indexer.per_node:
                weights[f"U.{h}"], weights[f"U_bias.{h}"] = u_w, u_b
                weights[f"delta.{h}"] = indexer.node_delta[h].detach().double().cpu().numpy()  # (B^h, B, hidden)
        return cls(weights, indexer.height, indexer.branching, threads)

    @property
    def n_leaves(self) -> int:
        return self.branching**self.height

    def routing_units(self, beam: int) -> int:
        """Inner products of the query's width one query's beam search computes (ehi.core.work)."""
        hidden = self.weights["U.0"].shape[0] if self.per_node else None
        return tree_routing_units(self.height, self.branching, beam, self.dim, hidden, self.per_node)

    def level_logits(self, h: int, x: np.ndarray, shared: np.ndarray, nodes: np.ndarray) -> np.ndarray:
        """Child logits at level h under parents ``nodes`` (n, m) -> (n, m, B); ``shared`` (n, H*B)."""
        b = self.branching
        out = shared[:, None, h * b : (h + 1) * b] + self.weights[f"parent.{h}"][nodes]  # (n, m, B)
        if self.per_node:
            z = x @ self.weights[f"U.{h}"].T + self.weights[f"U_bias.{h}"]  # (n, hidden)
            out = out + np.einsum("nmbk,nk->nmb", self.weights[f"delta.{h}"][nodes], z)
        return out

    def beam_search(self, queries: np.ndarray, beam: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``beam`` most probable leaves of each query (n, d): ids (n, beam) int64 and path
        log-probabilities (n, beam) float32, most probable first (as TreeIndexer.beam_search)."""
        if not 1 <= beam <= self.n_leaves:
            raise ValueError(f"beam must be in 1..B^H={self.n_leaves}, got {beam}")
        x = np.ascontiguousarray(queries, dtype=np.float32)
        if x.ndim != 2 or x.shape[1] != self.dim:
            raise ValueError(f"queries must be (n, {self.dim}), got shape {x.shape}")
        n, b = len(x), self.branching
        # a few queries never start BLAS's pool, and setting its limit costs more than routing them
        with _blas_threads(self.threads) if n >= BLAS_LIMIT_FROM else contextlib.nullcontext():
            shared = x @ self.A_all.T + self.c_all  # (n, H*B): every level's shared logits at once
            nodes = np.zeros((n, 1), dtype=np.int64)  # (n, m) kept nodes
            logp = np.zeros((n, 1), dtype=np.float32)  # (n, m)
            for h in range(self.height):
                logits = self.level_logits(h, x, shared, nodes)  # (n, m, B)
                top = logits.max(axis=-1, keepdims=True)
                child = logits - (np.log(np.exp(logits - top).sum(axis=-1, keepdims=True)) + top)  # log_softmax
                cand = (logp[:, :, None] + child).reshape(n, -1)  # (n, m*B)
                cand_nodes = (nodes[:, :, None] * b + np.arange(b)).reshape(n, -1)  # (n, m*B) their ids
                logp, idx = top_nodes(cand, cand_nodes, min(beam, cand.shape[1]))  # (n, m')
                nodes = np.take_along_axis(cand_nodes, idx, axis=1)
        return nodes, logp.astype(np.float32, copy=False)

    def save(self, path: str | os.PathLike) -> Path:
        meta = {"height": str(self.height), "branching": str(self.branching)}
        save_file(self.weights, str(path), metadata=meta)
        return Path(path)

    @classmethod
    def load(cls, path: str | os.PathLike, threads: int | None = 1) -> "NumpyRouter":
        from safetensors import safe_open

        with safe_open(str(path), framework="numpy") as f:
            meta = f.metadata() or {}
        if "height" not in meta or "branching" not in meta:
            raise ValueError(f"{path}: not an EHI router file (no height/branching metadata)")
        return cls(load_file(str(path)), int(meta["height"]), int(meta["branching"]), threads)


def top_nodes(values: np.ndarray, ids: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``width`` largest entries of each row (n, c), largest first, an exact tie going to the
    lower node id in ``ids`` (n, c), as TreeIndexer.beam_search breaks it: (values, column
    indices). Up to ``SORT_ALL_UP_TO`` columns one sort of the row is cheaper than partitioning
    first; past it, rows whose cut falls inside a tie are sorted whole, so the rule holds there too."""
    if values.shape[1] <= SORT_ALL_UP_TO:
        order = np.lexsort((ids, -values), axis=1)[:, :width]
        return np.take_along_axis(values, order, axis=1), order
    idx = np.argpartition(-values, width - 1, axis=1)[:, :width]
    part = np.take_along_axis(values, idx, axis=1)
    order = np.take_along_axis(idx, np.lexsort((np.take_along_axis(ids, idx, axis=1), -part), axis=1), axis=1)
    tied = (values >= part.min(axis=1, keepdims=True)).sum(axis=1) > width  # more at the cut than places
    if tied.any():
        order[tied] = np.lexsort((ids[tied], -values[tied]), axis=1)[:, :width]
    return np.take_along_axis(values, order, axis=1), order
