"""The cheap stage of choosing EHI's recipe: the tree alone on frozen embeddings, judged on dev.

A joint training run costs an hour of CPU; a tree fitted on cached embeddings costs seconds. So the
tree's own settings (initialisation, learning rate, steps, margin, corpus negatives, L_neighbour)
are screened here first, on the frozen pretrained embeddings, against k-means IVF with the same
number of lists on the same embeddings; the joint runs then only confirm the survivors. Every
figure is on the dev split; the test split is never read.

Each row: the setting, then dev nDCG@10 / Recall@100 of the tree at the largest beam scoring at
most 5% and 10% of the documents (measured), and of FAISS-IVF at the largest nprobe within the
same budgets. ``python -m ehi.evaluate.tree_recipe DATA_DIR EMB_DIR --branching 64 --out tree_recipe``
writes tree_recipe.md and .csv.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from functools import partial

import numpy as np
import pandas as pd
import torch

from ehi.data.dataset import Dataset
from ehi.data.judgements import relevant as relevant_judgements
from ehi.evaluate.roles import ROLE_TREE
from ehi.model.tree import TreeIndexer
from ehi.model.tree_init import kmeans_init_
from ehi.model.tree_stats import leaf_size_stats
from ehi.search.base import at_budget
from ehi.search.registry import IVF_KIND, build_searcher
from ehi.train.dev_eval import ranking_metrics, tree_at_budget
from ehi.train.tree_fit import pair_indexing_loss, run_tree_steps

BUDGETS = (0.05, 0.1)
GRID = {  # the screened settings; "steps: 0" keeps the initialisation itself in the race
    "init": ["data", "kmeans"], "steps": [0, 100, 300, 1000], "lr": [1e-3, 1e-2],
    "margin": [0.1, 0.3], "negatives": [0, 4],
}


def split_arrays(dataset: Dataset, q_emb: np.ndarray, split: str):
    """Query embeddings of a split's judged queries, their relevant doc rows, and the split's
    (query, positive) pairs as rows into those arrays."""
    doc_row = pd.Series(np.arange(len(dataset.corpus)), index=dataset.corpus.doc_id.astype(str))
    q_row = pd.Series(np.arange(len(dataset.queries)), index=dataset.queries.query_id.astype(str))
    rel = relevant_judgements(dataset.qrels[dataset.qrels.split == split])
    ids = sorted(set(rel.query_id.astype(str)))
    local = pd.Series(np.arange(len(ids)), index=ids)
    pair_q = local.loc[rel.query_id.astype(str)].to_numpy()
    pair_d = doc_row.loc[rel.doc_id.astype(str)].to_numpy()
    relevant = [np.sort(pair_d[pair_q == i]) for i in range(len(ids))]
    return q_emb[q_row.loc[ids].to_numpy()], relevant, pair_q, pair_d


def ivf_rows(doc_emb, dev_q, relevant, nlist: int, budgets=BUDGETS) -> list[dict]:
    """FAISS-IVF (the pipeline's baseline builder) at each budget (:func:`ehi.search.base.at_budget`)."""
    searcher = build_searcher(IVF_KIND, doc_emb, nlist=nlist)
    points = []
    for nprobe in range(1, nlist + 1):
        rows, _, n_scored = searcher.search(dev_q, 100, nprobe)
        points.append((float(np.mean(n_scored)) / len(doc_emb), rows))
    out = {}
    for budget in budgets:
        frac, rows = points[at_budget([p[0] for p in points], budget, cheapest_if_none=True)]
        m = ranking_metrics(np.asarray(rows), relevant)
        out.update({f"frac@{budget:g}": frac, f"ndcg@10@{budget:g}": m["ndcg@10"],
                    f"recall@100@{budget:g}": m["recall@100"]})
    return [{"system": f"faiss-ivf (nlist={nlist})", **out}]


def tree_row(tree, doc_emb, dev_q, relevant, budgets=BUDGETS) -> dict:
    leaf = tree.assign_leaves(doc_emb)
    out = {"leaf_max_over_mean": leaf_size_stats(np.bincount(leaf, minlength=tree.n_leaves))["leaf_max_over_mean"]}
    for budget in budgets:
        ranked, _, frac = tree_at_budget(tree, dev_q, doc_emb, leaf, budget)
        m = ranking_metrics(ranked, relevant)
        out.update({f"frac@{budget:g}": frac, f"ndcg@10@{budget:g}": m["ndcg@10"],
                    f"recall@100@{budget:g}": m["recall@100"]})
    return out


def screen(dataset: Dataset, doc_emb: np.ndarray, q_emb: np.ndarray, height: int, branching: int,
           grid: dict = GRID, batch_size: int = 64, seed: int = 0) -> pd.DataFrame:
    torch.set_num_threads(1)
    train_q, train_rel, pq, pd_ = split_arrays(dataset, q_emb, "train")
    dev_q, dev_rel, _, _ = split_arrays(dataset, q_emb, "dev")
    docs, queries = torch.from_numpy(doc_emb).float(), torch.from_numpy(train_q).float()
    rows = ivf_rows(doc_emb, dev_q, dev_rel, branching ** height)
    for values in itertools.product(*grid.values()):
        setting = dict(zip(grid, values))
        if setting["steps"] == 0 and (setting["lr"], setting["margin"], setting["negatives"]) != \
                (grid["lr"][0], grid["margin"][0], grid["negatives"][0]):
            continue  # an untrained tree does not depend on the training settings
        start = time.perf_counter()
        torch.manual_seed(seed)
        rng = np.random.default_rng(seed)
        tree = TreeIndexer(doc_emb.shape[1], height, branching)
        tree = kmeans_init_(tree, doc_emb, seed) if setting["init"] == "kmeans" else tree.standardize_(docs)
        loss = partial(pair_indexing_loss, tree, queries, docs, pq, pd_, batch_size, setting["margin"],
                       negatives=setting["negatives"], relevant=train_rel)
        tree, _ = run_tree_steps(tree, loss, setting["steps"], setting["lr"], rng)
        rows.append({"system": ROLE_TREE, **setting, **tree_row(tree, doc_emb, dev_q, dev_rel),
                     "seconds": time.perf_counter() - start})
    return pd.DataFrame(rows)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data_dir")
    parser.add_argument("emb_dir", help="folder with corpus.npy and queries.npy (frozen embeddings)")
    parser.add_argument("--height", type=int, default=1)
    parser.add_argument("--branching", type=int, nargs="+", default=[64],
                        help="one screen per branching, each against IVF with as many lists")
    parser.add_argument("--grid", type=json.loads, default=None,
                        help=f'JSON object overriding keys of the screened grid, e.g. \'{{"steps": [0, 300]}}\' (default {GRID})')
    parser.add_argument("--out", required=True, help="table path without suffix (.md and .csv are written)")
    args = parser.parse_args(argv)
    dataset = Dataset.read(args.data_dir)
    doc_emb, q_emb = np.load(f"{args.emb_dir}/corpus.npy"), np.load(f"{args.emb_dir}/queries.npy")
    grid = {**GRID, **(args.grid or {})}
    table = pd.concat([screen(dataset, doc_emb, q_emb, args.height, b, grid).assign(branching=b) for b in args.branching],
                      ignore_index=True)
    table.to_csv(f"{args.out}.csv", index=False)
    with open(f"{args.out}.md", "w") as fh:
        fh.write(table.to_markdown(index=False, floatfmt=".3f") + "\n")
    print(table.sort_values("ndcg@10@0.1", ascending=False).head(15).to_string())


if __name__ == "__main__":
    main()
