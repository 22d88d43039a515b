"""The tree's dev KMR curve over 1-10% scored, its area, and the k-means floor beside it.

What ``select_metric: kmr_auc`` selects on. The tables report a tree at several budgets, so
selecting on one (``dev_budget``) can keep a tree that is good there and poor below it; the area
under the dev curve judges what the tables show. Each budget is read like the KMR tables: at the
sweep point (beam) with the largest *measured* mean fraction of documents scored not above the
budget; a tree with no point that small scores 0 there, as in IVF's own tuning
(:func:`ehi.search.tune.score_curve`), so a tree whose smallest leaf set overshoots 1% pays for it.

``floor: kmeans`` adds a second candidate every epoch: a tree of the same shape set to the coarse
centroids FAISS-IVF trains on the *current* encoder's corpus embedding (the pipeline's IVF builder
and seed, :func:`ehi.core.ivf.ivf_centroids`): for a one-level tree that is the k-means IVF
index with as many lists on the same encoder, leaf for leaf and in probe order. The
epoch's candidate is whichever has the larger area (the trained tree on ties); the log records
``dev_floor_kmeans`` = 1 where the k-means tree was the better one, and selection keeps the epoch's
winner, so the index the pipeline searches as ``ehi+tree`` is never below that k-means tree on dev.
"""

from __future__ import annotations

import numpy as np
import torch

from ehi.model.tree import TreeIndexer
from ehi.core.ivf import IVF_SEED, ivf_centroids
from ehi.model.tree_init import kmeans_init_
from ehi.model.tree_stats import leaf_size_stats, leaf_sizes
from ehi.core.ranking import at_budget
from ehi.core.work import tree_routing_units
from ehi.train.dev_eval import beam_points, ranking_metrics, visited_top_rows

AUC_BUDGETS = (0.01, 0.02, 0.05, 0.1)


COSTS = ("documents", "work")  # what a budget counts: documents scored, or with the routing (ehi.core.work)


def tree_routing(tree: TreeIndexer):
    """beam -> the inner products the exported tree's search routes one query with (ehi.core.work)."""
    return lambda beam: tree_routing_units(tree.height, tree.branching, beam, tree.dim, tree.hidden, tree.per_node)


@torch.no_grad()
def tree_curve(tree: TreeIndexer, q_emb: np.ndarray, doc_emb: np.ndarray, doc_leaf: np.ndarray,
               relevant: list[np.ndarray], prefix: str, budgets=AUC_BUDGETS, cost: str = "documents") -> dict[str, float]:
    """``{prefix}_ndcg@10@<b>`` and ``{prefix}_frac@<b>`` per budget, ``{prefix}_auc`` (their mean
    nDCG@10) and the leaf balance ``{prefix}_leaf_max_over_mean`` / ``{prefix}_leaf_empty``;
    ``cost``: budgets as fractions of documents scored or of work (documents + routing)."""
    if cost not in COSTS:
        raise ValueError(f"cost must be one of {COSTS}, got {cost!r}")
    sizes = leaf_sizes(doc_leaf, tree.n_leaves)
    q = torch.from_numpy(np.ascontiguousarray(q_emb, dtype=np.float32))
    points = beam_points(tree, q, sizes, len(doc_emb), max(budgets), tree_routing(tree) if cost == "work" else None)
    out, values = {}, []
    for b in budgets:
        at = at_budget([p[0] for p in points], b)
        if at is None:
            out.update({f"{prefix}_ndcg@10@{b:g}": 0.0, f"{prefix}_frac@{b:g}": float("nan")})
            values.append(0.0)
            continue
        frac, _, leaves = points[at]
        ndcg = ranking_metrics(visited_top_rows(q_emb, doc_emb, doc_leaf, leaves), relevant)["ndcg@10"]
        out.update({f"{prefix}_ndcg@10@{b:g}": ndcg, f"{prefix}_frac@{b:g}": frac})
        values.append(ndcg)
    stats = leaf_size_stats(sizes)
    out.update({f"{prefix}_auc": float(np.mean(values)), f"{prefix}_leaf_max_over_mean": stats["leaf_max_over_mean"],
                f"{prefix}_leaf_empty": float(stats["leaf_empty"])})
    return out




def kmeans_tree(like: TreeIndexer, doc_emb: np.ndarray, seed: int = IVF_SEED) -> TreeIndexer:
    """A tree of ``like``'s shape routing as FAISS-IVF's k-means of ``doc_emb`` (with ``seed``).
    Built under a forked RNG: the training run's torch stream (dropout, later inits) is the same
    with or without it."""
    with torch.random.fork_rng(devices=[]):
        tree = TreeIndexer(like.dim, like.height, like.branching, like.hidden, like.path_layout, per_node=like.per_node)
    return kmeans_init_(tree, doc_emb, seed, kmeans=ivf_centroids)


def floor_candidates(tree: TreeIndexer, q_emb: np.ndarray, doc_emb: np.ndarray, doc_leaf: np.ndarray,
                     relevant: list[np.ndarray], floor: str, cost: str = "documents") -> tuple[dict, TreeIndexer | None]:
    """The trained tree's curve and, with ``floor: kmeans``, the k-means tree's on the same
    embeddings, budgets under ``cost`` (the study's search.budget_cost) -> (log columns, the
    k-means tree where it beat the trained one, else None)."""
    out = tree_curve(tree, q_emb, doc_emb, doc_leaf, relevant, "dev_tree", cost=cost)
    if floor != "kmeans":
        return out, None
    km = kmeans_tree(tree, doc_emb)
    out.update(tree_curve(km, q_emb, doc_emb, km.assign_leaves(doc_emb), relevant, "dev_kmeans", cost=cost))
    use_km = out["dev_kmeans_auc"] > out["dev_tree_auc"]
    out.update({"dev_floor_auc": max(out["dev_kmeans_auc"], out["dev_tree_auc"]), "dev_floor_kmeans": float(use_km)})
    return out, (km if use_km else None)
