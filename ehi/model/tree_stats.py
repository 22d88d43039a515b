"""Health of a tree index: how balanced its leaves are and whether queries reach their positives.

Both numbers are logged per training epoch: a collapsing tree (most documents in one leaf) makes
beam search as slow as exact search, and a tree whose queries miss their positives' leaves makes
it inaccurate; the overall loss shows neither.
"""

from __future__ import annotations

import logging

import numpy as np
import torch

from ehi.model.tree import TreeIndexer

log = logging.getLogger(__name__)


def gini(sizes: np.ndarray) -> float:
    """Gini coefficient of leaf sizes: 0 = perfectly balanced, -> 1 = everything in one leaf."""
    x = np.sort(np.asarray(sizes, dtype=np.float64))
    n, total = len(x), x.sum()
    if n == 0 or total == 0:
        return 0.0
    ranks = np.arange(1, n + 1)
    return float((2 * ranks - n - 1) @ x / (n * total))


def leaf_sizes(doc_leaf: np.ndarray, n_leaves: int) -> np.ndarray:
    """Documents per leaf (L,) from ``doc_leaf`` (N,), the leaf id of each document."""
    return np.bincount(np.asarray(doc_leaf, dtype=np.int64), minlength=n_leaves)


def leaf_size_stats(sizes: np.ndarray) -> dict[str, float]:
    """Distribution of documents over leaves, from the leaf sizes (L,): the one place these
    numbers are computed (training log, leaf-balance table, dev tree-shape table)."""
    sizes = np.asarray(sizes)
    mean = sizes.mean()
    return {
        "leaf_min": int(sizes.min()),
        "leaf_median": float(np.median(sizes)),
        "leaf_max": int(sizes.max()),
        "leaf_gini": gini(sizes),
        "leaf_empty": int((sizes == 0).sum()),
        "leaf_max_over_mean": float(sizes.max() / mean) if mean > 0 else 0.0,
    }


def leaf_occupancy(doc_leaf: np.ndarray, n_leaves: int) -> dict[str, float]:
    """How the documents of ``doc_leaf`` (N,) spread over ``n_leaves`` leaves, in the numbers a
    collapse shows first: empty leaves (count and fraction), the largest leaf over the mean, and
    the entropy of the document-to-leaf distribution over log(n_leaves) (1 = even, 0 = one leaf)."""
    sizes = leaf_sizes(doc_leaf, n_leaves)
    share = sizes[sizes > 0] / sizes.sum()
    empty = int((sizes == 0).sum())
    return {
        "leaf_empty": empty,
        "leaf_empty_fraction": empty / n_leaves,
        "leaf_max_over_mean": float(sizes.max() / sizes.mean()),
        "leaf_entropy": float(-(share * np.log(share)).sum() / np.log(n_leaves)),
    }


# A tree is "collapsed" when one leaf holds at least this share of the corpus: beam search then
# scores about as much as exact search and its budget axis means nothing.
COLLAPSE_SHARE = 0.5
# The balance bar of the method issue: no leaf over 5x the mean size.
UNBALANCED_MAX_OVER_MEAN = 5.0


def leaf_health(sizes: np.ndarray) -> tuple[str, str]:
    """Classify a tree by its leaf sizes: ("ok" | "empty leaves" | "unbalanced" | "collapsed", why).

    Worst first: collapse, then imbalance, then empty leaves. The message is meant for logs and
    captions, so that a degenerate tree is never evaluated without a word said.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    total, empty = int(sizes.sum()), int((sizes == 0).sum())
    if total == 0:
        return "collapsed", "the tree holds no documents"
    share, over_mean = sizes.max() / total, sizes.max() / sizes.mean()
    if share >= COLLAPSE_SHARE:
        return "collapsed", (f"leaf collapse: one leaf holds {share:.0%} of the {total} documents "
                             f"({empty} of {len(sizes)} leaves empty)")
    if over_mean > UNBALANCED_MAX_OVER_MEAN:
        return "unbalanced", f"the largest leaf is {over_mean:.1f}x the mean size ({empty} empty leaves)"
    if empty:
        return "empty leaves", f"{empty} of {len(sizes)} leaves are empty"
    return "ok", f"balanced: largest leaf {over_mean:.1f}x the mean, no empty leaf"


def routing_recall(indexer: TreeIndexer, q_emb, pair_query: np.ndarray, pair_doc: np.ndarray,
                   doc_leaf: np.ndarray, beam: int, batch_size: int = 4096) -> dict[str, float]:
    """Share of (query, positive) pairs whose positive's leaf is the query's top-1 leaf, and share
    inside the query's ``beam`` leaves.

    q_emb (Q, d) query embeddings; pair_query / pair_doc (P,) row indices into q_emb and doc_leaf.
    """
    if len(pair_query) == 0:
        return {"pos_in_top1_leaf": float("nan"), "pos_in_beam": float("nan"), "beam": beam}
    queries, inverse = np.unique(pair_query, return_inverse=True)
    q = torch.as_tensor(np.asarray(q_emb)[queries])
    leaves = np.concatenate([
        indexer.beam_search(q[s : s + batch_size], beam)[0].cpu().numpy()
        for s in range(0, len(q), batch_size)
    ])  # (Q', beam)
    target = np.asarray(doc_leaf)[pair_doc][:, None]  # (P, 1)
    hits = leaves[inverse] == target  # (P, beam)
    return {
        "pos_in_top1_leaf": float(hits[:, 0].mean()),
        "pos_in_beam": float(hits.any(axis=1).mean()),
        "beam": int(beam),
    }


def default_beam(n_leaves: int, fraction: float = 0.1) -> int:
    """The beam that visits about ``fraction`` of the leaves (at least one)."""
    return max(1, int(round(n_leaves * fraction)))


def tree_diagnostics(indexer: TreeIndexer, doc_leaf, q_emb, pair_query, pair_doc,
                     beam: int | None = None) -> dict[str, float]:
    """Leaf-size statistics and routing recall together, as one row of the training log."""
    beam = beam or default_beam(indexer.n_leaves)
    sizes = leaf_sizes(doc_leaf, indexer.n_leaves)
    status, why = leaf_health(sizes)
    if status != "ok":  # the epoch log keeps the numbers; say it in words where people look
        log.warning("tree after this epoch: %s", why)
    return {
        **leaf_size_stats(sizes),
        **routing_recall(indexer, q_emb, pair_query, pair_doc, doc_leaf, beam),
    }
