"""Dev-split retrieval quality during training: exact search and the tree at a budget, per epoch.

What ``train.dev_eval`` logs and ``train.select: dev`` selects on. It reads the corpus embedding the
loop computes at every epoch end anyway, plus one encoding of the dev queries, so an epoch's dev
figures cost one small encoding pass and a few matrix products.

Metrics are the evaluation's own (ranx: nDCG@10 with graded gains and log2 discounts, Recall@100
over the relevant documents), on the grades the queries are given (:attr:`TrainData.graded`).
The tree is read like the KMR tables (:func:`ehi.search.base.at_budget`): at the beam of the largest
*measured* mean fraction of documents scored not above ``fraction``.
"""

from __future__ import annotations

import numpy as np
import torch

from ehi.model.tree import TreeIndexer
from ehi.core.ranking import at_budget
from ehi.core.work import fraction_of_work

TOP = 100  # ranks kept per query: enough for Recall@100


def ranking_metrics(ranked: np.ndarray, relevant) -> dict[str, float]:
    """nDCG@10 and Recall@100 of ranked doc rows (n, >=100; -1 = no document): the evaluation's
    own (ranx) metrics (:func:`ehi.evaluate.metrics.ranked_rows_metrics`); ``relevant`` per query,
    relevant rows or ``{row: grade}``."""
    from ehi.core.ranking import ranked_rows_metrics

    return ranked_rows_metrics(ranked, relevant, ("ndcg@10", "recall@100"))


def top_rows(scores: np.ndarray, k: int = TOP) -> np.ndarray:
    """Rows of the k best scores per query (n, N) -> (n, k), best first; -inf scores become -1."""
    k_eff = min(k, scores.shape[1])
    part = np.argpartition(-scores, k_eff - 1, axis=1)[:, :k_eff]
    order = np.argsort(-np.take_along_axis(scores, part, 1), axis=1, kind="stable")
    rows = np.take_along_axis(part, order, 1)
    rows[~np.isfinite(np.take_along_axis(scores, rows, 1))] = -1
    return np.pad(rows, ((0, 0), (0, k - k_eff)), constant_values=-1)


EXACT_CHUNK = 256  # dev queries scored against the whole corpus at a time: (256, N) floats, not (n, N)


def exact_top_rows(q_emb: np.ndarray, doc_emb: np.ndarray, k: int = TOP) -> np.ndarray:
    """:func:`top_rows` of exact search, in chunks of queries (memory bounded at 10^5-10^6 documents)."""
    return np.concatenate([top_rows(q_emb[i : i + EXACT_CHUNK] @ doc_emb.T, k) for i in range(0, len(q_emb), EXACT_CHUNK)]
                          or [np.empty((0, k), np.int64)])


def visited_top_rows(q_emb: np.ndarray, doc_emb: np.ndarray, doc_leaf: np.ndarray, leaves: np.ndarray,
                     k: int = TOP) -> np.ndarray:
    """Rows of the k best documents of each query's visited ``leaves`` (n, beam) -> (n, k), -1 past
    the visited documents: what a tree search returns, scoring the visited documents only (never
    the full (n, N) score matrix)."""
    order = np.argsort(doc_leaf, kind="stable")
    starts = np.searchsorted(doc_leaf[order], np.arange(int(doc_leaf.max(initial=-1)) + 2))
    out = np.full((len(q_emb), k), -1, dtype=np.int64)
    for i, row in enumerate(leaves):
        row = row[(row >= 0) & (row < len(starts) - 1)]
        docs = np.concatenate([order[starts[leaf] : starts[leaf + 1]] for leaf in row] or [np.empty(0, np.int64)])
        if len(docs):
            local = top_rows((doc_emb[docs] @ q_emb[i])[None, :], k)[0]  # ranks among the visited documents
            out[i] = np.where(local >= 0, docs[np.maximum(local, 0)], -1)
    return out


def beam_points(tree: TreeIndexer, q: torch.Tensor, sizes: np.ndarray, n_docs: int, top: float,
                routing=None) -> list:
    """(measured fraction, beam, leaves (n, beam)) for beams 1, 2, ... until the fraction passes
    twice ``top`` (fractions grow near-monotonically with the beam, never exactly). ``routing``
    (beam -> units a query), when given, adds the routing to each fraction: a fraction of work."""
    points = []
    for beam in range(1, tree.n_leaves + 1):
        leaves = tree.beam_search(q, beam)[0].cpu().numpy()  # (n, beam)
        frac = float(fraction_of_work(sizes[leaves].sum(1).mean(), routing(beam) if routing else 0, n_docs))
        points.append((frac, beam, leaves))
        if frac > 2 * top:
            break
    return points


@torch.no_grad()
def tree_at_budget(tree: TreeIndexer, q_emb: np.ndarray, doc_emb: np.ndarray, doc_leaf: np.ndarray,
                   fraction: float = 0.1) -> tuple[np.ndarray, int, float]:
    """Beam-search ranking at the budget ``fraction`` (:func:`ehi.search.base.at_budget` over the
    measured beams; the cheapest beam when none is that cheap) -> ranked rows (n, 100), beam,
    measured fraction."""
    sizes = np.bincount(doc_leaf, minlength=tree.n_leaves)
    q = torch.from_numpy(np.ascontiguousarray(q_emb, dtype=np.float32))
    points = beam_points(tree, q, sizes, len(doc_emb), fraction)
    frac, beam, leaves = points[at_budget([p[0] for p in points], fraction, cheapest_if_none=True)]
    return visited_top_rows(q_emb, doc_emb, doc_leaf, leaves), beam, frac


def dev_metrics(q_emb: np.ndarray, doc_emb: np.ndarray, relevant: list[np.ndarray], tree: TreeIndexer | None = None,
                doc_leaf: np.ndarray | None = None, fraction: float = 0.1) -> dict[str, float]:
    """``dev_*`` figures of exact search and, with a tree, of the tree at ``fraction``."""
    out = {f"dev_{k}": v for k, v in ranking_metrics(exact_top_rows(q_emb, doc_emb), relevant).items()}
    if tree is not None:
        ranked, beam, frac = tree_at_budget(tree, q_emb, doc_emb, doc_leaf, fraction)
        out.update({f"dev_tree_{k}": v for k, v in ranking_metrics(ranked, relevant).items()})
        out.update({"dev_tree_beam": beam, "dev_tree_frac": frac})
    return out
