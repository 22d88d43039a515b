"""Negatives of a batch: mined hard negatives per pair, and which batch documents may serve as
negatives for which query (never a judged one)."""

from __future__ import annotations

import numpy as np
import torch

from ehi.train.batches import EmbeddingCache, TrainData
from ehi.train.config import TrainConfig


def mine_negatives(data: TrainData, cache: EmbeddingCache | None, q_rows, pos_rows, k: int, rng, cfg: TrainConfig) -> np.ndarray:
    """k hard negatives per pair -> (n, k) doc rows. EHI: unjudged documents in the positive's
    leaf; DE: a sample of the query's exact top-``hard_negative_pool``. Pairs whose pool is too
    small are topped up with random unjudged documents so that every batch has the same shape."""
    out = np.empty((len(q_rows), k), dtype=np.int64)
    if k == 0:
        return out
    if cfg.use_tree:
        leaf = cache.doc_leaf
        members = np.flatnonzero(np.isin(leaf, np.unique(leaf[pos_rows])))
        members = members[np.argsort(leaf[members], kind="stable")]
        bounds = np.searchsorted(leaf[members], np.stack([leaf[pos_rows], leaf[pos_rows] + 1]))
        pools = [members[a:b] for a, b in bounds.T]
    else:
        scores = cache.q_emb[q_rows] @ cache.doc_emb.T  # (n, N)
        for i, q in enumerate(q_rows):
            scores[i, data.relevant[q]] = -np.inf
        top = min(cfg.hard_negative_pool, scores.shape[1])
        pools = list(np.argpartition(-scores, top - 1, axis=1)[:, :top])
    n_docs = len(data.doc_texts)
    for i, (q, pool) in enumerate(zip(q_rows, pools)):
        if len(data.relevant[q]) >= n_docs:
            raise ValueError(f"query {data.query_ids[q]!r} judges every document relevant: no negative exists")
        pool = np.setdiff1d(pool, data.relevant[q])
        picked = rng.choice(pool, min(k, len(pool)), replace=False) if len(pool) else pool
        while len(picked) < k:  # top up; a handful of draws at most unless the corpus is tiny
            extra = rng.integers(0, n_docs, k - len(picked))
            picked = np.concatenate([picked, np.setdiff1d(extra, data.relevant[q])])
        out[i] = picked[:k]
    return out


def relevance_mask(data: TrainData, q_rows, doc_rows) -> np.ndarray:
    """(n, m) True where batch document j is judged relevant to query i."""
    return np.stack([np.isin(doc_rows, data.relevant[q]) for q in q_rows])


def negative_mask(data: TrainData, q_rows, doc_rows, k: int, in_batch: bool,
                  relevant: np.ndarray | None = None) -> torch.Tensor:
    """(n, m) True where batch document j is a valid negative for query i (unjudged for it).
    ``relevant``: the batch's :func:`relevance_mask`, when the caller already has it."""
    n = len(q_rows)
    mask = ~(relevance_mask(data, q_rows, doc_rows) if relevant is None else relevant)
    if not in_batch:  # keep only each query's own hard negatives (columns n + i*k ...)
        own = np.zeros_like(mask)
        for i in range(n):
            own[i, n + i * k : n + (i + 1) * k] = True
        mask &= own
    return torch.from_numpy(mask)
