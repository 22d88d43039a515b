"""Dev-split retrieval quality during training: exact search and the tree at a budget, per epoch.

What ``train.dev_eval`` logs and ``train.select: dev`` selects on. It reads the corpus embedding the
loop computes at every epoch end anyway, plus one encoding of the dev queries, so an epoch's dev
figures cost one small encoding pass and a few matrix products.

Metrics follow trec_eval on binary relevance (relevance > 0): nDCG@10 with log2 discounts and
Recall@100 over the judged relevant documents; the reported numbers of ``ehi.evaluate`` (ranx) use
the graded judgements, so on graded collections these are a selection signal, not the report.
The tree is read like the KMR tables: at the largest beam whose *measured* mean fraction of
documents scored is at most ``fraction`` (beam leaf sets are not nested, so every beam is tried).
"""

from __future__ import annotations

import numpy as np
import torch

from ehi.model.tree import TreeIndexer

TOP = 100  # ranks kept per query: enough for Recall@100


def ranking_metrics(ranked: np.ndarray, relevant: list[np.ndarray]) -> dict[str, float]:
    """nDCG@10 and Recall@100 of ranked doc rows (n, >=100; -1 = no document) on binary labels."""
    discounts = 1.0 / np.log2(np.arange(2, 12))
    ndcg, recall = np.zeros(len(ranked)), np.zeros(len(ranked))
    for i, (row, rel) in enumerate(zip(ranked, relevant)):
        hit = np.isin(row, rel) & (row >= 0)
        ideal = discounts[: min(len(rel), 10)].sum()
        ndcg[i] = (hit[:10] * discounts[: len(hit[:10])]).sum() / ideal if ideal else 0.0
        recall[i] = hit[:TOP].sum() / len(rel) if len(rel) else 0.0
    return {"ndcg@10": float(ndcg.mean()), "recall@100": float(recall.mean())}


def top_rows(scores: np.ndarray, k: int = TOP) -> np.ndarray:
    """Rows of the k best scores per query (n, N) -> (n, k), best first; -inf scores become -1."""
    k_eff = min(k, scores.shape[1])
    part = np.argpartition(-scores, k_eff - 1, axis=1)[:, :k_eff]
    order = np.argsort(-np.take_along_axis(scores, part, 1), axis=1, kind="stable")
    rows = np.take_along_axis(part, order, 1)
    rows[~np.isfinite(np.take_along_axis(scores, rows, 1))] = -1
    return np.pad(rows, ((0, 0), (0, k - k_eff)), constant_values=-1)


def tree_at_budget(tree: TreeIndexer, q_emb: np.ndarray, doc_emb: np.ndarray, doc_leaf: np.ndarray,
                   fraction: float = 0.1) -> tuple[np.ndarray, int, float]:
    """Beam-search ranking at the largest beam scoring at most ``fraction`` of the documents on
    average (the smallest beam when none does) -> ranked rows (n, 100), beam, measured fraction."""
    sizes = np.bincount(doc_leaf, minlength=tree.n_leaves)
    q = torch.from_numpy(np.ascontiguousarray(q_emb, dtype=np.float32))
    best = first = None
    for beam in range(1, tree.n_leaves + 1):
        leaves = tree.beam_search(q, beam)[0].cpu().numpy()  # (n, beam)
        frac = float(sizes[leaves].sum(1).mean() / len(doc_emb))
        first = first or (leaves, beam, frac)
        if frac <= fraction + 1e-12:
            best = (leaves, beam, frac)
        elif frac > 2 * fraction:  # budgets grow near-monotonically: wider beams cannot come back under
            break
    leaves, beam, frac = best or first
    scores = q_emb @ doc_emb.T  # (n, N)
    visited = np.zeros_like(scores, dtype=bool)
    for i, row in enumerate(leaves):
        visited[i] = np.isin(doc_leaf, row)
    return top_rows(np.where(visited, scores, -np.inf)), beam, frac


def dev_metrics(q_emb: np.ndarray, doc_emb: np.ndarray, relevant: list[np.ndarray], tree: TreeIndexer | None = None,
                doc_leaf: np.ndarray | None = None, fraction: float = 0.1) -> dict[str, float]:
    """``dev_*`` figures of exact search and, with a tree, of the tree at ``fraction``."""
    out = {f"dev_{k}": v for k, v in ranking_metrics(top_rows(q_emb @ doc_emb.T), relevant).items()}
    if tree is not None:
        ranked, beam, frac = tree_at_budget(tree, q_emb, doc_emb, doc_leaf, fraction)
        out.update({f"dev_tree_{k}": v for k, v in ranking_metrics(ranked, relevant).items()})
        out.update({"dev_tree_beam": beam, "dev_tree_frac": frac})
    return out
