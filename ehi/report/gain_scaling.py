"""The tree's gain over k-means IVF as the index grows: against N and against training queries a leaf.

Reads the gain table of :mod:`ehi.report.gain` (one row per dataset, tree, IVF, metric and
budget of work) and keeps one comparison, the floor recipe's tree against IVF with as many lists
(the partition it starts from), at a few fixed budgets. Each dataset is one point: the synthetic
worlds (with and without query asymmetry) and the real collections on the same axes. A real
collection's fraction of work is derived (its routing, L / N, is 14-22% of a scan), so it has no
point at the study's smallest budgets; the table says where a dataset has none. Rule
``gain_scaling`` (workflow/rules/gain.smk) renders it from rule ``gain_table``'s CSV.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ehi.report.figures import render_table, save_figure
from ehi.report.gain import GainSystems

BUDGETS = (0.01, 0.05, 0.1, 0.5)  # 50%: where every real collection has a point
AXES = (("n_docs", "documents N"), ("train_queries_per_leaf", "training queries a leaf"))
GROUPS = {"world": ("o", "synthetic world"), "world_asym": ("^", "synthetic world, asymmetric queries"),
          "collection": ("s", "real collection (work derived)"), "collection_counted": ("D", "real collection")}


def group_of(row: pd.Series) -> str:
    """Which family a dataset's row belongs to: a world (with or without asymmetry), or a collection
    (no world knobs in its data facts) whose work was counted or derived."""
    if row.work == "derived":
        return "collection"
    asymmetry = row.get("asymmetry", np.nan)
    if asymmetry is None or pd.isna(asymmetry):
        return "collection_counted"
    return "world_asym" if float(asymmetry) > 0 else "world"


def scaling_rows(gains: pd.DataFrame, systems: GainSystems, budgets=BUDGETS) -> pd.DataFrame:
    """One row per (dataset, metric, budget) of the chosen comparison, with its family: the first
    tree of ``systems`` against its first control (IVF with as many lists), else, where a dataset has
    no rows of it (a collection run without the control), against the second (the dev-tuned IVF, which
    chose the tree's leaf count on the committed collections, docs/findings.md)."""
    tree, ivf = systems.trees[0], systems.controls[0]
    has_ivf = gains.groupby("dataset").ivf.transform(lambda s: (s == ivf).any())
    wanted = np.where(has_ivf, ivf, systems.fallback)
    rows = gains[(gains.tree == tree) & (gains.ivf == wanted) & gains.budget.isin(budgets)].copy()
    rows["group"] = rows.apply(group_of, axis=1)
    keep = ["dataset", "group", "ivf", "n_docs", "leaves", "train_queries_per_leaf", "metric", "budget", "gain",
            "gain_sd", "n_seeds", "p_holm"]
    return rows[keep].sort_values(["metric", "budget", "group", "n_docs"]).reset_index(drop=True)


def scaling_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Datasets down, budgets across: "gain ± sd" (one seed: the gain alone; * where Holm p < 0.05)."""
    def cell(r):
        if np.isnan(r.gain):
            return "–"
        sd = f" ± {r.gain_sd:.3f}" if r.n_seeds > 1 and not np.isnan(r.gain_sd) else ""
        return f"{r.gain:+.3f}{sd}{'*' if r.p_holm < 0.05 else ''}"

    shown = rows.assign(cell=rows.apply(cell, axis=1), budget=rows.budget.map(lambda b: f"{b:.0%}"))
    wide = shown.pivot_table(index=["metric", "dataset", "ivf", "n_docs", "leaves", "train_queries_per_leaf"],
                             columns="budget", values="cell", aggfunc="first").reset_index()
    order = [f"{b:.0%}" for b in BUDGETS if f"{b:.0%}" in wide.columns]
    wide = wide[[*wide.columns[:6], *order]].fillna("–")
    wide["train_queries_per_leaf"] = wide.train_queries_per_leaf.map(lambda x: f"{x:.2f}")
    return wide.sort_values(["metric", "n_docs"]).rename(columns={"train_queries_per_leaf": "queries/leaf"})


def scaling_figure(rows: pd.DataFrame, path: Path, tree: str) -> Path:
    """Gain against N (left) and training queries a leaf (right), one row of panels a metric; colour a
    budget, marker a family; filled where the Holm-adjusted p is below 0.05, sd bars over seeds."""
    import matplotlib.pyplot as plt

    metrics = list(dict.fromkeys(rows.metric))
    fig, axes = plt.subplots(len(metrics), len(AXES), figsize=(11, 3.6 * len(metrics)), squeeze=False, sharex="col")
    colours = dict(zip(BUDGETS, plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    for i, metric in enumerate(metrics):
        for j, (column, label) in enumerate(AXES):
            ax = axes[i][j]
            for (budget, group), pts in rows[(rows.metric == metric) & rows.gain.notna()].groupby(["budget", "group"]):
                marker, name = GROUPS[group]
                pts = pts.sort_values(column)
                ax.errorbar(pts[column], pts.gain, yerr=pts.gain_sd.fillna(0), color=colours[budget], marker=marker,
                            mfc="none", ls="-" if group != "collection" else "none", capsize=2,
                            label=f"{budget:.0%} of work, {name}")
                sig = pts[pts.p_holm < 0.05]
                ax.plot(sig[column], sig.gain, marker, color=colours[budget])
            ax.axhline(0, color="k", lw=0.8)
            ax.set_xscale("log")
            ax.set_xlabel(label)
            ax.set_ylabel(f"gain in {metric}")
            ax.set_title(f"{tree} − IVF with as many lists: {metric}", fontsize=9)
    handles, labels = axes[0][-1].get_legend_handles_labels()
    unique = dict(zip(labels, handles))
    axes[0][-1].legend(unique.values(), unique.keys(), fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                       frameon=False)
    fig.suptitle("The floor tree's gain over k-means IVF with as many lists, at equal work: scale study worlds "
                 "and real collections", fontsize=10)
    return save_figure(fig, path)


def build_gain_scaling(gains_csv: Path, out: Path, figure: Path, systems: GainSystems) -> pd.DataFrame:
    """The scaling table (``out``.md/.tex/.csv) and figure from the gain table's CSV; returns its rows."""
    rows = scaling_rows(pd.read_csv(gains_csv), systems)
    tree, ivf = systems.trees[0], systems.controls[0]
    if rows.empty:
        raise ValueError(f"{gains_csv}: no {tree} against {ivf} rows at budgets {BUDGETS}")
    render_table(scaling_table(rows), Path(out),
                 caption=f"Gain of {tree} over k-means IVF with as many lists ({ivf}; {systems.fallback} where the "
                 "dataset has no such system, with the same count) at equal fractions of work, by dataset (ehi/report/gain_scaling.py): mean ± sd over seeds, * Holm p < 0.05; – no point that cheap.")
    scaling_figure(rows, figure, tree)
    return rows
