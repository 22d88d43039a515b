"""The tree's leaf count for a new collection, chosen on its dev split (``train.branching: auto``).

The candidates are the ones IVF's ``nlist`` gets (:func:`ehi.search.tune.default_grid` for faiss-ivf: the
sqrt(N) rule from halved to x4, or ``search.ivf_nlist``), so the tree and IVF are compared at
granularities from the same grid. On small corpora the finest entry tends to win (finer lists give
finer steps at low budgets), so the grid grows by doubling its top while the top is the best,
until leaves would hold fewer than ``MIN_DOCS_PER_LEAF`` documents on average: the chosen count is
never the grid's edge unless that floor stops it, and the table says so.

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
from ehi.train.dev_curve import AUC_BUDGETS, IVF_SEED, kmeans_tree, tree_curve

MIN_DOCS_PER_LEAF = 4  # below this a leaf is a handful of documents and k-means is mostly noise


def score_count(doc_emb: np.ndarray, dev_q: np.ndarray, relevant: list[np.ndarray], leaves: int,
                seeds=(0, 1, 2)) -> list[dict]:
    """One row per k-means seed: the dev curve of the k-means tree with ``leaves`` leaves."""
    like = TreeIndexer(doc_emb.shape[1], 1, leaves)
    rows = []
    for seed in seeds:
        tree = kmeans_tree(like, doc_emb, IVF_SEED + seed)
        curve = tree_curve(tree, dev_q, doc_emb, tree.assign_leaves(doc_emb), relevant, "dev")
        rows.append({"leaves": leaves, "seed": seed, **{k[4:]: v for k, v in curve.items()}})
    return rows


def choose_leaf_count(doc_emb: np.ndarray, dev_q: np.ndarray, relevant: list[np.ndarray], grid: list[int],
                      seeds=(0, 1, 2)) -> tuple[int, pd.DataFrame]:
    """The count with the best mean dev area, the grid extended while its top wins -> (count,
    table of every (count, seed) with ``chosen`` and ``grid`` = "given" / "extended")."""
    cap = max(2, len(doc_emb) // MIN_DOCS_PER_LEAF)
    counts = sorted({int(c) for c in grid if 2 <= c <= cap}) or [cap]
    rows = [r | {"grid": "given"} for c in counts for r in score_count(doc_emb, dev_q, relevant, c, seeds)]
    while True:
        means = pd.DataFrame(rows).groupby("leaves").auc.mean()
        best = int(means.index[int(np.argmax(means.to_numpy()))])  # first maximum: the smaller count
        if best != max(counts) or 2 * best > cap:
            break
        counts.append(2 * best)
        rows += [r | {"grid": "extended"} for r in score_count(doc_emb, dev_q, relevant, 2 * best, seeds)]
    table = pd.DataFrame(rows)
    table["chosen"] = table.leaves == best
    return best, table


def summary_markdown(table: pd.DataFrame, chosen: int, n_docs: int) -> str:
    cols = ["auc", *[f"ndcg@10@{b:g}" for b in AUC_BUDGETS], "leaf_max_over_mean", "leaf_empty"]
    means = table.groupby(["leaves", "grid"], sort=True)[cols].mean().reset_index()
    top = "" if chosen < means.leaves.max() else (
        f" The chosen count is the grid's top: doubling it would leave fewer than {MIN_DOCS_PER_LEAF} documents a leaf.")
    return (f"Leaf count on the dev split: the tree set to FAISS-IVF's partition of the pretrained embeddings "
            f"({n_docs} documents), dev nDCG@10 at 1, 2, 5, 10% scored and their mean (auc), mean of "
            f"{table.seed.nunique()} IVF k-means seeds; candidates from IVF's nlist grid, doubled while its top won. "
            f"Chosen: {chosen} leaves.{top}\n\n"
            + means.to_markdown(index=False, floatfmt=".3f") + "\n")
