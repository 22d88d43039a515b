"""The tree's leaf count for a new collection, chosen on its dev split (``train.branching: auto``).

The candidates are the ones IVF's ``nlist`` gets (:func:`ehi.search.tune.default_grid` for faiss-ivf: the
sqrt(N) rule from halved to x4, or ``search.ivf_nlist``), so the tree and IVF are compared at
granularities from the same grid. On small corpora the finest entry tends to win (finer lists give
finer steps at low budgets), so the grid grows by doubling its top while the top is the best: the
chosen count is never the grid's edge unless the stop below ends the growth, and the table says so.

What a budget costs is the cost model (``cost``):

* ``documents``: the fraction of documents scored. Routing is free, so finer is never dearer and
  the growth stops where leaves would hold fewer than ``MIN_DOCS_PER_LEAF`` documents on average.
* ``work``: documents plus the centroids routing scores (:mod:`ehi.core.work`; a one-level tree of
  L leaves scores L a query). L leaves cost L before any document, so the curve itself stops the
  growth: no cap on documents a leaf, only the count at which routing alone passes the largest
  budget (every budget is then out of reach).

Each count is scored as the floor's candidate at the start of training: the tree set to FAISS-IVF's
partition of the pretrained embeddings (:func:`ehi.train.dev_curve.kmeans_tree`), judged by the area
under its dev KMR curve over 1-10% scored (:func:`ehi.train.dev_curve.tree_curve`), the mean over
``seeds`` k-means runs (IVF's seed plus 0, 1, 2: k-means' own spread on a small dev split is
as large as the differences between counts). Ties go to the smaller count. H = 1: the count is
the branching.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ehi.model.tree import TreeIndexer
from ehi.train.dev_curve import AUC_BUDGETS, COSTS, IVF_SEED, kmeans_tree, tree_curve

MIN_DOCS_PER_LEAF = 4  # below this a leaf is a handful of documents and k-means is mostly noise


def count_cap(n_docs: int, cost: str) -> int:
    """The largest count the growth may reach under ``cost`` (see the module doc)."""
    if cost not in COSTS:
        raise ValueError(f"cost must be one of {COSTS}, got {cost!r}")
    if cost == "documents":
        return max(2, n_docs // MIN_DOCS_PER_LEAF)
    return max(2, min(n_docs, int(max(AUC_BUDGETS) * n_docs)))


def score_count(doc_emb: np.ndarray, dev_q: np.ndarray, relevant: list[np.ndarray], leaves: int,
                seeds=(0, 1, 2), cost: str = "documents") -> list[dict]:
    """One row per k-means seed: the dev curve of the k-means tree with ``leaves`` leaves."""
    like = TreeIndexer(doc_emb.shape[1], 1, leaves)
    rows = []
    for seed in seeds:
        tree = kmeans_tree(like, doc_emb, IVF_SEED + seed)
        curve = tree_curve(tree, dev_q, doc_emb, tree.assign_leaves(doc_emb), relevant, "dev", cost=cost)
        rows.append({"leaves": leaves, "seed": seed, **{k[4:]: v for k, v in curve.items()}})
    return rows


def choose_leaf_count(doc_emb: np.ndarray, dev_q: np.ndarray, relevant: list[np.ndarray], grid: list[int],
                      seeds=(0, 1, 2), cost: str = "documents") -> tuple[int, pd.DataFrame]:
    """The count with the best mean dev area under ``cost``, the grid extended while its top wins ->
    (count, table of every (count, seed) with ``chosen``, ``grid`` = "given" / "extended", ``cost``)."""
    cap = count_cap(len(doc_emb), cost)
    counts = sorted({int(c) for c in grid if 2 <= c <= cap}) or [cap]
    rows = [r | {"grid": "given"} for c in counts for r in score_count(doc_emb, dev_q, relevant, c, seeds, cost)]
    while True:
        means = pd.DataFrame(rows).groupby("leaves").auc.mean()
        best = int(means.index[int(np.argmax(means.to_numpy()))])  # first maximum: the smaller count
        if best != max(counts) or 2 * best > cap:
            break
        counts.append(2 * best)
        rows += [r | {"grid": "extended"} for r in score_count(doc_emb, dev_q, relevant, 2 * best, seeds, cost)]
    table = pd.DataFrame(rows)
    table["chosen"] = table.leaves == best
    table["cost"] = cost
    return best, table


def summary_markdown(table: pd.DataFrame, chosen: int, n_docs: int) -> str:
    cols = ["auc", *[f"ndcg@10@{b:g}" for b in AUC_BUDGETS], "leaf_max_over_mean", "leaf_empty"]
    means = table.groupby(["leaves", "grid"], sort=True)[cols].mean().reset_index()
    work = "cost" in table and (table.cost == "work").any()
    stop = (f"routing alone would pass {max(AUC_BUDGETS):.0%} of work" if work else
            f"doubling it would leave fewer than {MIN_DOCS_PER_LEAF} documents a leaf")
    top = "" if chosen < means.leaves.max() else f" The chosen count is the grid's top: {stop}."
    scored = "of work (documents + centroids routed)" if work else "scored"
    return (f"Leaf count on the dev split: the tree set to FAISS-IVF's partition of the pretrained embeddings "
            f"({n_docs} documents), dev nDCG@10 at 1, 2, 5, 10% {scored} and their mean (auc), mean of "
            f"{table.seed.nunique()} IVF k-means seeds; candidates from IVF's nlist grid, doubled while its top won. "
            f"Chosen: {chosen} leaves.{top}\n\n"
            + means.to_markdown(index=False, floatfmt=".3f") + "\n")
