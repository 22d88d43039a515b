"""A k-means warm start of the tree (a stabiliser beyond the paper, ``train.indexer_init: kmeans``).

The paper's tree starts from random directions; with few training queries L_indexing shapes the
routing of the training pairs only and the rest of the partition stays arbitrary, so the trained
tree can end below a plain k-means IVF index on the same embeddings. Starting from spherical
k-means puts a floor under it: before any training step the tree *is* an IVF partition.

Level 1 is exact: the logits are ``W_1 [one_hot(root); U_1 x] + b``; with U_1 = I (zero bias) and
the z-columns of W_1 set to ``s * centroids`` every document goes to its nearest centroid by inner
product, which is spherical k-means' assignment. ``s`` scales the logits to unit spread over the
data so the softmax is neither flat nor saturated (the same reason as ``standardize_``).

Deeper levels: with ``per_node`` each parent has its own child classifier, so level h holds a
k-means of each parent's documents (hierarchical k-means). In the paper's form the B child
directions are shared by every parent, so one k-means of the residuals x - c_parent (over all
documents) gives the shared directions: the residual-quantisation reading of a shared router.
"""

from __future__ import annotations

import numpy as np
import torch

from ehi.model.tree import TreeIndexer


def spherical_kmeans(x: np.ndarray, k: int, seed: int = 0, niter: int = 25) -> np.ndarray:
    """(k, d) unit-norm centroids of the rows of ``x`` (N, d) by inner product (FAISS k-means)."""
    import faiss  # heavy; only this initialiser needs it

    x = np.ascontiguousarray(x, dtype=np.float32)
    if len(x) < k:
        raise ValueError(f"k-means with {k} clusters needs at least {k} points, got {len(x)}")
    km = faiss.Kmeans(x.shape[1], k, niter=niter, seed=seed, spherical=True, verbose=False,
                      min_points_per_centroid=1, max_points_per_centroid=max(256, len(x) // k + 1))
    km.train(x)
    return km.centroids.copy()


def _scale(x: np.ndarray, centroids: np.ndarray) -> float:
    logits = x @ centroids.T
    return float(1.0 / max(logits.std(), 1e-6))


@torch.no_grad()
def kmeans_init_(tree: TreeIndexer, emb: np.ndarray, seed: int = 0, kmeans=spherical_kmeans) -> TreeIndexer:
    """Set ``tree`` so that its argmax routing of ``emb`` (N, dim) is (hierarchical) k-means'.
    ``kmeans(x, k, seed) -> (k, d) centroids`` computes each split (e.g. :func:`ehi.core.ivf.ivf_centroids`)."""
    if tree.hidden < tree.dim:
        raise ValueError(f"a k-means start needs indexer_hidden >= the embedding dim ({tree.dim}), got {tree.hidden}")
    x = np.asarray(emb, dtype=np.float32)
    device = next(tree.parameters()).device
    b = tree.branching
    node = np.zeros(len(x), dtype=np.int64)  # each document's node at the current level
    parent_centroid = None  # set once a level below the root exists
    for h in range(tree.height):
        u, w = tree.U[h], tree.W[h]
        u.weight.zero_()
        u.weight[: tree.dim].copy_(torch.eye(tree.dim))  # z = [x; 0]
        u.bias.zero_()
        w.weight.zero_()
        w.bias.zero_()
        n_parent = b ** h
        child = np.zeros(len(x), dtype=np.int64)
        if h == 0 or not tree.per_node:
            inputs = x if h == 0 else x - parent_centroid[node]  # residuals below level 1
            cents = kmeans(inputs, b, seed + h)
            s = _scale(inputs, cents)
            w.weight[:, n_parent : n_parent + tree.dim].copy_(torch.from_numpy(s * cents))
            child = np.argmax(x @ cents.T, axis=1)  # z = x: routing scores the raw embedding
        else:
            for p in range(n_parent):
                rows = np.flatnonzero(node == p)
                if len(rows) < b:  # too few documents to split: keep the shared (zero) router
                    continue
                cents = kmeans(x[rows], b, seed + h * n_parent + p)
                tree.node_delta[h][p].zero_()
                tree.node_delta[h][p][:, : tree.dim].copy_(torch.from_numpy(_scale(x[rows], cents) * cents))
                child[rows] = np.argmax(x[rows] @ cents.T, axis=1)
        if h + 1 < tree.height:
            next_node = node * b + child
            parent_centroid = np.zeros((b ** (h + 1), tree.dim), dtype=np.float32)
            np.add.at(parent_centroid, next_node, x)
            norms = np.linalg.norm(parent_centroid, axis=1, keepdims=True)
            parent_centroid /= np.maximum(norms, 1e-12)
            node = next_node
    return tree.to(device)
