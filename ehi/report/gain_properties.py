"""The learned partition's gain set against what a user can measure of a collection before training.

One row per dataset of the gain table (:mod:`ehi.report.gain`): its properties measured on the dev
queries and the pretrained vectors (``results/<dataset>/properties.json``,
:mod:`ehi.report.collection_properties`; a dataset whose vectors were not at hand has none), the
training queries a leaf, and beside them

- the gain in nDCG@10 of the best learned partition over k-means IVF with as many lists at 1, 2, 5
  and 10% of work (of the trees in the gain table, the one with the larger gain at that budget; a
  collection without that control is read against the dev-tuned IVF, as :mod:`ehi.report.gain_scaling`
  reads it) and 50%, where the small real collections have their points;
- where a trained benchmark exists (``results/benchmarks/trained_<dataset>/trained_matched.parquet``),
  its QPS ratio at equal nDCG@10 (the target share ``QPS_SHARE`` of the lower best) to the best peer:
  for each flat-leaf tree its ratio to the peer it fares worst against, the best such tree's.

A second table gives each property's Spearman rank correlation with the gain at ``FIGURE_BUDGET``
over the datasets that have both, and how many those are; the figure plots that gain against each
property, one point a dataset, real collections and synthetic worlds marked apart. Rule
``properties_table`` (workflow/rules/gain.smk) renders them.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from ehi.evaluate.roles import EHI, ROLE_TREE, is_compressed, is_tree_lists
from ehi.report.figures import render_table, save_figure
from ehi.search.registry import IVF_KIND

PROPERTIES = ("exact_ndcg@10", "exact_recall@10", "train_queries_per_leaf", "kmeans_unexplained",
              "doc_neighbour_in_list", "query_top1_in_list", "relevant_in_list", "near_duplicate")
BUDGETS = (0.01, 0.02, 0.05, 0.1, 0.5)
FIGURE_BUDGET = 0.05
METRIC = "ndcg@10"
QPS_SHARE = 0.95
# the gain is read against the tree's own control (k-means lists as many as its leaves, flat), else,
# as the gain tables read the small real collections, against dev-tuned FAISS-IVF
FALLBACK = f"{EHI}+{IVF_KIND}"


def is_control(system: str) -> bool:
    return is_tree_lists(system) and not is_compressed(system)


def gain_column(budget: float) -> str:
    return f"gain@{budget:.0%}"


def best_gains(gains: pd.DataFrame, budgets=BUDGETS) -> pd.DataFrame:
    """Per dataset: the best tree's gain over IVF with as many lists at each budget, the tree best at
    ``FIGURE_BUDGET``, the control read, and the sizes the gain table gives."""
    rows = gains[(gains.metric == METRIC) & gains.budget.isin(budgets) & gains.gain.notna()]
    control = rows.ivf.map(is_control).astype(bool)
    has_control = control.groupby(rows.dataset).transform("any").astype(bool)
    rows = rows[np.where(has_control, control, rows.ivf == FALLBACK)]
    out = []
    for dataset, own in gains.groupby("dataset", sort=False):
        mine = rows[rows.dataset == dataset]
        best = mine.loc[mine.groupby("budget").gain.idxmax()] if len(mine) else mine
        at = best.set_index("budget")
        first = own.iloc[0]
        out.append({"dataset": dataset, "kind": "synthetic" if pd.notna(first.asymmetry) else "real",
                    "n_docs": int(first.n_docs), "leaves": int(first.leaves),
                    "train_queries_per_leaf": float(first.train_queries_per_leaf),
                    # the best tree's control at the figure's budget (a dataset's trees may sit on
                    # different vectors, each read against k-means lists on its own)
                    "control": at.ivf.get(FIGURE_BUDGET, mine.ivf.iloc[0] if len(mine) else ""),
                    **{gain_column(b): at.gain.get(b, np.nan) for b in budgets},
                    ROLE_TREE: at.tree.get(FIGURE_BUDGET, "")})
    return pd.DataFrame(out)


def qps_ratio(matched: pd.DataFrame) -> tuple[float, str]:
    """The best flat-leaf tree's QPS ratio at equal nDCG@10 to the peer it fares worst against."""
    rows = matched[(matched.metric == METRIC) & np.isclose(matched.target_share, QPS_SHARE)
                   & ~matched.ehi.str.endswith("-pq")]
    if rows.empty:
        return np.nan, ""
    worst = rows.loc[rows.groupby("ehi").qps_ratio.idxmin()]
    best = worst.loc[worst.qps_ratio.idxmax()]
    return float(best.qps_ratio), str(best.peer)


def properties_table(gains: pd.DataFrame, properties: dict[str, dict], matched: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The gain table's datasets with their measured properties and trained-benchmark ratio."""
    table = best_gains(gains)
    for name in PROPERTIES:
        if name != "train_queries_per_leaf":
            table[name] = table.dataset.map(lambda d, n=name: properties.get(d, {}).get(n, np.nan))
    ratios = {d: qps_ratio(m) for d, m in matched.items()}
    table["qps_ratio"] = table.dataset.map(lambda d: ratios.get(d, (np.nan, ""))[0])
    table["qps_peer"] = table.dataset.map(lambda d: ratios.get(d, (np.nan, ""))[1])
    gains_cols = [gain_column(b) for b in BUDGETS]
    return table[["dataset", "kind", "n_docs", "leaves", "control", *PROPERTIES, *gains_cols, ROLE_TREE, "qps_ratio", "qps_peer"]]


def correlations(table: pd.DataFrame, budget: float = FIGURE_BUDGET) -> pd.DataFrame:
    """Each property's Spearman rank correlation with the gain at ``budget``: over every dataset that
    has both, and over the real collections alone."""
    from scipy.stats import spearmanr

    gain = gain_column(budget)
    out = []
    for name in PROPERTIES:
        row = {"property": name}
        for subset, rows in (("all", table), ("real", table[table.kind == "real"])):
            both = rows[[name, gain]].dropna()
            varied = len(both) > 2 and both[name].nunique() > 1 and both[gain].nunique() > 1
            row[f"n_{subset}"] = len(both)
            row[f"spearman_{subset}"] = float(spearmanr(both[name], both[gain]).statistic) if varied else np.nan
        out.append(row)
    return pd.DataFrame(out)


def properties_figure(table: pd.DataFrame, path: Path, budget: float = FIGURE_BUDGET) -> Path:
    """Gain at ``budget`` against each property, one panel a property, one point a dataset (named),
    real collections as squares and synthetic worlds as circles."""
    import matplotlib.pyplot as plt

    gain = gain_column(budget)
    columns = 4
    fig, axes = plt.subplots(-(-len(PROPERTIES) // columns), columns, figsize=(3.3 * columns, 5.6), squeeze=False, sharey=True)
    for ax, name in zip(axes.ravel(), PROPERTIES):
        for kind, marker in (("real", "s"), ("synthetic", "o")):
            rows = table[(table.kind == kind)].dropna(subset=[name, gain])
            ax.scatter(rows[name], rows[gain], marker=marker, label=kind, alpha=0.8)
            for _, r in rows.iterrows():
                ax.annotate(r.dataset, (r[name], r[gain]), fontsize=6, xytext=(2, 2), textcoords="offset points")
        ax.axhline(0, color="k", lw=0.8)
        if name == "train_queries_per_leaf":
            ax.set_xscale("log")  # 0.1 to 216: the collections spread over three decades
        ax.set_xlabel(name, fontsize=8)
        ax.grid(alpha=0.3)
    for ax in axes[:, 0]:
        ax.set_ylabel(f"gain in {METRIC} at {budget:.0%} of work", fontsize=8)
    axes[0, 0].legend(fontsize=7)
    fig.suptitle(f"Best learned partition − k-means IVF with as many lists ({METRIC}, {budget:.0%} of work) "
                 "against what is measured before training (dev queries)", fontsize=9)
    fig.tight_layout()
    return save_figure(fig, path)


def read_matched(paths: dict[str, Path]) -> dict[str, pd.DataFrame]:
    """The trained benchmarks' matched tables ({dataset: its ``trained_matched.parquet``}), by dataset."""
    return {dataset: pd.read_parquet(p) for dataset, p in paths.items()}


def build_properties(gains_csv: Path, properties: dict[str, Path], matched: dict[str, pd.DataFrame], out: Path,
                     figure: Path) -> pd.DataFrame:
    """The table (``out``.md/.csv/...), its correlations (``out``_correlation) and the figure
    (``properties``: {dataset: its properties.json})."""
    facts = {dataset: json.loads(Path(p).read_text()) for dataset, p in properties.items()}
    table = properties_table(pd.read_csv(gains_csv), facts, matched)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    render_table(table, out, floatfmt=".3f",
                 caption=f"The best learned partition's gain in {METRIC} over k-means IVF with as many lists at "
                         "each fraction of work, beside what is measured before training on the dev queries "
                         "(ehi/report/gain_properties.py); qps_ratio: the trained benchmark's, at equal nDCG@10, "
                         "to the best peer.",
                 note="– : not measured (no pretrained vectors at hand, or no point that cheap, or no trained benchmark).")
    render_table(correlations(table), out.with_name(out.name + "_correlation"), floatfmt=".2f",
                 caption=f"Spearman rank correlation of each property with the gain at {FIGURE_BUDGET:.0%} of work, "
                         "over the datasets with both (all; real collections alone), n: how many.")
    properties_figure(table, figure)
    return table
