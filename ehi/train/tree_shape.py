"""Choosing the tree shape (H, B) on the dev split, cheaply: the tree alone, on frozen embeddings.

Full joint training costs hours per shape on a CPU, so shapes are compared with the encoder frozen
at its starting point (the pretrained embeddings the pipeline caches anyway): for each shape a
fresh tree (data-initialised, as in training) is trained with the paper's L_indexing on the train
split's (query, positive) pairs, in-batch negatives, for a fixed number of steps; then the dev
queries are routed and we record

* ``dev_pos_in_beam``: the share of dev (query, positive) pairs whose positive's leaf is in the
  beam, at the largest beam whose leaves hold at most ``fraction`` of the corpus on average,
* ``dev_frac_scored``: that mean fraction (the real budget, from the leaf sizes),
* the leaf balance (largest leaf / mean, empty leaves).

The chosen shape is the balanced one (largest leaf at most 5x the mean, the method's bar) with the
highest mean ``dev_pos_in_beam`` over seeds; the test queries are never read.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd
import torch

from ehi.data.judgements import relevant
from ehi.model.tree_stats import UNBALANCED_MAX_OVER_MEAN, leaf_health, leaf_size_stats, leaf_sizes
from ehi.model.tree import TreeIndexer
from ehi.core.ranking import at_budget
from ehi.train import tree_fit
from ehi.train.dev_eval import beam_points
from ehi.train.tree_fit import pair_indexing_loss


def pairs_of(queries: pd.DataFrame, qrels: pd.DataFrame, corpus_ids, split: str) -> tuple[np.ndarray, np.ndarray]:
    """(query row, doc row) of the split's positive judgements, rows into the full tables."""
    q_row = pd.Series(np.arange(len(queries)), index=queries.query_id.astype(str))
    d_row = pd.Series(np.arange(len(corpus_ids)), index=pd.Index(np.asarray(corpus_ids).astype(str)))
    rel = relevant(qrels[qrels.split == split])
    return q_row.loc[rel.query_id.astype(str)].to_numpy(), d_row.loc[rel.doc_id.astype(str)].to_numpy()


def fit_shape_tree(doc_emb: np.ndarray, q_emb: np.ndarray, pairs: tuple[np.ndarray, np.ndarray], height: int,
                   branching: int, steps: int = 300, batch_size: int = 64, lr: float = 1e-2, margin: float = 0.1,
                   seed: int = 0) -> TreeIndexer:
    """A fresh tree trained with L_indexing alone on frozen embeddings (in-batch negatives)."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    docs, queries = torch.from_numpy(doc_emb).float(), torch.from_numpy(q_emb).float()
    tree = TreeIndexer(doc_emb.shape[1], height, branching).standardize_(docs)
    batch_loss = partial(pair_indexing_loss, tree, queries, docs, pairs[0], pairs[1], batch_size, margin)
    return tree_fit.run_tree_steps(tree, batch_loss, steps, lr, rng)[0]


@torch.no_grad()
def dev_routing(tree: TreeIndexer, doc_emb: np.ndarray, q_emb: np.ndarray, pairs, fraction: float) -> dict:
    """Routing quality of ``tree`` on the dev pairs at the budget ``fraction`` (the KMR tables' rule,
    :func:`ehi.search.base.at_budget`, on the real leaf sizes; the cheapest beam when none fits)."""
    doc_leaf = tree.assign_leaves(doc_emb)
    sizes = leaf_sizes(doc_leaf, tree.n_leaves)
    pq, pd_ = pairs
    queries = np.unique(pq)
    where = pd.Series(np.arange(len(queries)), index=queries).loc[pq].to_numpy()
    q = torch.from_numpy(q_emb[queries]).float()
    points = beam_points(tree, q, sizes, len(doc_emb), fraction)
    frac_scored, beam, leaves = points[at_budget([p[0] for p in points], fraction, cheapest_if_none=True)]
    hit = (leaves[where] == doc_leaf[pd_][:, None]).any(axis=1)
    best = {"beam": beam, "dev_pos_in_beam": float(hit.mean()), "dev_frac_scored": float(frac_scored)}
    stats = leaf_size_stats(sizes)
    return {**best, "leaf_max_over_mean": stats["leaf_max_over_mean"], "empty_leaves": stats["leaf_empty"],
            "leaf_status": leaf_health(sizes)[0]}


def compare_shapes(doc_emb, q_emb, train_pairs, dev_pairs, shapes, fraction: float = 0.1, steps: int = 300,
                   seeds=(0, 1, 2)) -> pd.DataFrame:
    """One row per (shape, seed) with the dev routing figures; see the module docstring."""
    rows = []
    for height, branching in shapes:
        for seed in seeds:
            tree = fit_shape_tree(doc_emb, q_emb, train_pairs, height, branching, steps=steps, seed=seed)
            rows.append({"height": height, "branching": branching, "leaves": branching ** height, "seed": seed,
                         **dev_routing(tree, doc_emb, q_emb, dev_pairs, fraction)})
    return pd.DataFrame(rows)


def choose(table: pd.DataFrame, max_over_mean: float = UNBALANCED_MAX_OVER_MEAN) -> tuple[int, int]:
    """The (H, B) with the best mean dev_pos_in_beam among the balanced shapes (mean largest leaf
    at most ``max_over_mean`` times the mean leaf, the method's balance bar); all shapes when none
    is balanced. Without the bar, more leaves always look better on routing while their budget
    estimate rests on a few huge leaves and many empty ones."""
    means = table.groupby(["height", "branching"])[["dev_pos_in_beam", "leaf_max_over_mean"]].mean()
    balanced = means[means.leaf_max_over_mean <= max_over_mean]
    best = (balanced if len(balanced) else means).dev_pos_in_beam.idxmax()
    return int(best[0]), int(best[1])


def summary_markdown(table: pd.DataFrame, fraction: float, chosen: tuple[int, int]) -> str:
    means = (table.groupby(["height", "branching", "leaves"])
             [["beam", "dev_pos_in_beam", "dev_frac_scored", "leaf_max_over_mean", "empty_leaves"]].mean().reset_index())
    return (f"Tree shapes on the dev split, the tree trained alone (L_indexing) on frozen pretrained embeddings; "
            f"each shape at the largest beam scoring at most {fraction:.0%} of the corpus; mean of "
            f"{table.seed.nunique()} seeds. Chosen: height={chosen[0]}, branching={chosen[1]}.\n\n"
            + means.to_markdown(index=False, floatfmt=".3f") + "\n")
