"""One table and one figure across datasets, the way BEIR and Pyserini report: a row per dataset.

Read from each dataset's cached ``results/<dataset>/main/summary.parquet`` (the KMR summary) and
``results/<dataset>/significance.parquet`` (its own paired tests). Columns: every system's nDCG@10
and Recall@100 at <= 5% and <= 10% of the documents scored and at exact search (100%), each beside
a column that sets EHI's tree against the best peer at that budget: the difference, the peer, and
whether that dataset's own randomization test (Holm-adjusted, at the alpha it ran with) found it
significant. Nothing is re-tested here, so the marks are exactly those of each dataset's table.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from ehi.core.io import read_table
from ehi.evaluate.metrics import kmr_table
from ehi.report import figures as draw

METRICS = ("ndcg@10", "recall@100")
BUDGETS = {0.05: "<=5%", 0.1: "<=10%", 1.0: "exact"}
TREE = "ehi+tree"  # the system the table is about
TEST = "randomization"  # whose Holm-adjusted p-value marks the comparison


def load_results(results_root: str | os.PathLike, datasets) -> dict[str, tuple[pd.DataFrame, pd.DataFrame]]:
    """{dataset: (main summary, significance)} of every dataset with both cached files."""
    root = Path(results_root)
    out = {}
    for name in datasets:
        summary, sig = root / name / "main" / "summary.parquet", root / name / "significance.parquet"
        if summary.exists() and sig.exists():
            out[name] = (read_table(summary, "summary"), read_table(sig))
    return out


def tree_vs_best_peer(sig: pd.DataFrame, metric: str, budget: float) -> str:
    """'delta vs peer (p_adj p) *' for the peer with the highest mean in the dataset's own tests of
    EHI's tree at ``budget``; '*' = significant there; '–' where the table has no such test."""
    rows = sig[(sig.system_a == TREE) & (sig.metric == metric) & (sig.test == TEST) & np.isclose(sig.budget, budget)]
    if rows.empty:
        return "–"
    best = rows.loc[rows.mean_b.idxmax()]
    mark = " *" if bool(best.significant) else ""
    return f"{best.mean_a - best.mean_b:+.3f} vs {best.system_b} (p_adj {best.p_adjusted:.3f}){mark}"


def system_order(summaries) -> list[str]:
    """EHI's tree first, then every other system of any dataset, alphabetically."""
    systems = sorted({s for summary in summaries for s in summary.system.unique()})
    return sorted(systems, key=lambda s: (s != TREE, s))


def across_table(results: dict[str, tuple[pd.DataFrame, pd.DataFrame]], metrics=METRICS, budgets=BUDGETS) -> pd.DataFrame:
    """A row per dataset; per metric and budget, every system's value and EHI's tree vs the best peer."""
    systems = system_order(summary for summary, _ in results.values())
    rows = []
    for name, (summary, sig) in results.items():
        row = {"dataset": name, "test queries": int(sig.n_queries.max()) if "n_queries" in sig and len(sig) else np.nan}
        for metric in metrics:
            kmr = kmr_table(summary, list(budgets), metric)
            for budget, label in budgets.items():
                at = kmr[np.isclose(kmr.target, budget)].set_index("system").value
                for system in systems:
                    row[f"{metric} {label} {system}"] = at.get(system, np.nan)
                row[f"{metric} {label} tree vs best peer"] = tree_vs_best_peer(sig, metric, budget)
        rows.append(row)
    table = pd.DataFrame(rows)
    return table.dropna(axis="columns", how="all")  # e.g. exact search at <= 5%: no system has such a point


def build_across(results_root: str | os.PathLike, datasets, stem: str | os.PathLike, figure: str | os.PathLike) -> pd.DataFrame:
    """Render the table (stem.md/.tex/.csv) and the figure of ``datasets`` with cached results."""
    results = load_results(results_root, datasets)
    if not results:
        raise FileNotFoundError(f"no dataset of {list(datasets)} has cached results under {results_root}")
    table = across_table(results)
    caption = ("Across datasets: each system at the largest budget not above 5% and 10% of the documents scored, "
               "and at exact search; 'tree vs best peer': EHI's tree minus the best other system at that budget, "
               f"with that dataset's own Holm-adjusted {TEST} test (* = significant at its alpha).")
    draw.render_table(table, stem, caption=caption, floatfmt=".3f")
    draw.plot_kmr_panels({name: summary for name, (summary, _) in results.items()}, METRICS[0], figure)
    return table
