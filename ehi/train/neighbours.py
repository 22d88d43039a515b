"""L_neighbour's plumbing (an option beyond the paper, ``TrainConfig.lambda_neighbour``).

Each training step draws ``neighbour_anchors`` corpus documents, pairs each with one of its
``neighbour_k`` nearest documents in the cached embeddings, and scores the pairs with
:func:`ehi.train.losses.objective.neighbour_loss` over their tree paths. The nearest-neighbour table is built
lazily from the training cache and lives until the next re-index replaces the cache.
"""

from __future__ import annotations

import numpy as np
import torch

from ehi.model.tree import TreeIndexer, TreeOutput
from ehi.train.batches import EmbeddingCache
from ehi.train.losses.objective import neighbour_loss


def nearest_documents(doc_emb: np.ndarray, k: int, chunk: int = 1024) -> np.ndarray:
    """The k nearest other documents of each row of doc_emb (N, d) by inner product -> (N, k')
    int64, k' = min(k, N-1). Exact, in chunks of rows: O(N^2 d) time, O(chunk * N) memory."""
    emb = torch.as_tensor(doc_emb, dtype=torch.float32)
    n = len(emb)
    k = min(k, n - 1)
    out = np.empty((n, k), dtype=np.int64)
    for start in range(0, n, chunk):
        scores = emb[start : start + chunk] @ emb.T  # (c, N)
        rows = torch.arange(start, start + len(scores))
        scores[torch.arange(len(scores)), rows] = float("-inf")  # not itself
        out[start : start + len(scores)] = scores.topk(k, dim=1).indices.numpy()
    return out


def neighbour_term(cache: EmbeddingCache, indexer: TreeIndexer, rng, cfg, device) -> torch.Tensor:
    """lambda_neighbour's L_neighbour on ``neighbour_anchors`` random corpus documents (see
    TrainConfig.lambda_neighbour). The neighbour table is built lazily from the cache and lives
    until the next re-index replaces the cache."""
    return neighbour_pair_loss(indexer(neighbour_pairs(cache, rng, cfg, device)), cfg)


def neighbour_pairs(cache: EmbeddingCache, rng, cfg, device) -> torch.Tensor:
    """The cached embeddings of m random anchors, then of one nearest neighbour of each -> (2m, d)."""
    if cache.doc_knn is None:
        cache.doc_knn = nearest_documents(cache.doc_emb, cfg.neighbour_k)
    knn = cache.doc_knn  # (N, k)
    n_docs = len(knn)
    anchors = rng.choice(n_docs, min(cfg.neighbour_anchors, n_docs), replace=False)
    partners = knn[anchors, rng.integers(0, knn.shape[1], len(anchors))]
    return torch.from_numpy(cache.doc_emb[np.concatenate([anchors, partners])]).to(device, torch.float32)


def neighbour_pair_loss(tree: TreeOutput, cfg) -> torch.Tensor:
    """L_neighbour on the tree of :func:`neighbour_pairs`' (2m, d) rows."""
    m = len(tree.leaf) // 2
    anchors = TreeOutput(tree.probs[:m], tree.frontier[:m], tree.path[:m], tree.leaf[:m])
    partners = TreeOutput(tree.probs[m:], tree.frontier[m:], tree.path[m:], tree.leaf[m:])
    return neighbour_loss(anchors, partners, temperature=cfg.neighbour_temperature, layout=cfg.path_layout)
