"""One table and one figure across datasets, the way BEIR and Pyserini report: a row per dataset.

Read from each dataset's cached ``results/<dataset>/main/summary.parquet`` (the KMR summary) and
``results/<dataset>/significance.parquet`` (its own paired tests). Columns: every system's nDCG@10
and Recall@100 at <= 5% and <= 10% of the documents scored and at exact search (100%), each beside
a column that sets EHI's tree against the best peer at that budget: the difference, the peer, and
whether that dataset's own randomization test (Holm-adjusted, at the alpha it ran with) found it
significant. Nothing is re-tested here, so the marks are exactly those of each dataset's table.
The page shows one table per metric and budget, a row per system and a column per dataset; the
CSV keeps the whole table, a row per dataset.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ehi.core.io import atomic_path, read_table
from ehi.evaluate.metrics import kmr_table
from ehi.evaluate.roles import ROLE_EXACT, ROLE_TREE, main_tree
from ehi.evaluate.seeds import kmr_over_seeds
from ehi.evaluate.variant_systems import parse as parse_variant_systems, with_variant_systems
from ehi.report import figures as draw
from ehi.report.kmr_figures import plot_kmr_panels
from ehi.report.latex import table_tex
from ehi.report.seed_tables import seeded_main_summary
from ehi.report.styles import is_ehi_search

METRICS = ("ndcg@10", "recall@100")
BUDGETS = {0.05: "<=5%", 0.1: "<=10%", 1.0: ROLE_EXACT}
TEST = "randomization"  # whose Holm-adjusted p-value marks the comparison
CURVE_TARGETS = (0.01, 0.02, 0.05, 0.1, 0.2, 1.0)  # the seed-mean curve's points (the KMR table's budgets)


def load_results(results_root: str | os.PathLike, datasets, seeding: dict | None = None) -> dict[str, tuple[pd.DataFrame, pd.DataFrame]]:
    """{dataset: (main summary with its variant systems, significance)} of every dataset with both
    cached files. ``seeding`` ({dataset: {"seed_replicas", "variant_systems"}}, the
    dataset's config): the summary of every seed, with a ``seed`` column (ehi.evaluate.seeds)."""
    root = Path(results_root)
    out = {}
    for name in datasets:
        summary, sig = root / name / "main" / "summary.parquet", root / name / "significance.parquet"
        if not (summary.exists() and sig.exists()):
            continue
        setting = (seeding or {}).get(name) or {}
        specs = parse_variant_systems(setting.get("variant_systems"))
        if setting.get("seed_replicas"):
            frame = seeded_main_summary(root / name, setting["seed_replicas"], specs)
        else:
            sources = [(spec, read_table(root / name / spec.variant / "summary.parquet", "summary")) for spec in specs
                       if (root / name / spec.variant / "summary.parquet").exists()]
            frame = with_variant_systems(read_table(summary, "summary"), sources)
        out[name] = (frame, read_table(sig))
    return out


def budget_values(summary: pd.DataFrame, metric: str, budgets) -> pd.DataFrame:
    """Each system's value at each budget (target, system, value, sd): the seed mean and sd where
    ``summary`` has seeds, else the one run's value (sd NaN)."""
    if "seed" in summary and summary.seed.nunique() > 1:
        return kmr_over_seeds(summary, list(budgets), metric)[["target", "system", "value", "sd", "frac_visited"]]
    return kmr_table(summary, list(budgets), metric).assign(sd=np.nan)[["target", "system", "value", "sd", "frac_visited"]]


def _cell(value: float, sd: float):
    if np.isnan(sd) or np.isnan(value):
        return value
    return f"{value:.3f} ± {sd:.3f}"


def tree_vs_best_peer(sig: pd.DataFrame, metric: str, budget: float, tree: str) -> str:
    """'delta vs peer (p_adj p) *' for the peer (not another tree) with the highest mean in the
    dataset's own tests of ``tree`` at ``budget``; '*' = significant there, '(within seed spread)' =
    over seeds, a difference no larger than a side's sd; '–' where the table has no such test."""
    rows = sig[(sig.system_a == tree) & (sig.metric == metric) & (sig.test == TEST) & np.isclose(sig.budget, budget)
               & ~sig.system_b.map(is_ehi_search)]
    if rows.empty:
        return "–"
    best = rows.loc[rows.mean_b.idxmax()]
    within = "within_seed_spread" in rows and bool(best.within_seed_spread)
    mark = " (within seed spread)" if within else (" *" if bool(best.significant) else "")
    return f"{best.mean_a - best.mean_b:+.3f} vs {best.system_b} (p_adj {best.p_adjusted:.3f}){mark}"


def system_order(summaries) -> list[str]:
    """EHI's tree (:func:`ehi.evaluate.roles.main_tree`) first, then every other system of any
    dataset, alphabetically."""
    systems = sorted({s for summary in summaries for s in summary.system.unique()})
    tree = main_tree(systems)
    return sorted(systems, key=lambda s: (s != tree, s))


def across_table(results: dict[str, tuple[pd.DataFrame, pd.DataFrame]], metrics=METRICS, budgets=BUDGETS) -> pd.DataFrame:
    """A row per dataset; per metric and budget, every system's value and EHI's tree vs the best peer."""
    systems = system_order(summary for summary, _ in results.values())
    trees = [s for s in systems if is_ehi_search(s)]  # EHI's tree and each variant tree beside it (the registry's)
    main = main_tree(systems)  # the table's own tree: its rows are "tree vs best peer"
    rows = []
    for name, (summary, sig) in results.items():
        row = {"dataset": name, "test queries": int(sig.n_queries.max()) if "n_queries" in sig and len(sig) else np.nan}
        if "seed" in summary:
            row["seeds"] = int(summary.seed.nunique())
        for metric in metrics:
            kmr = budget_values(summary, metric, budgets)
            for budget, label in budgets.items():
                at = kmr[np.isclose(kmr.target, budget)].set_index("system")
                for system in systems:
                    row[f"{metric} {label} {system}"] = (_cell(at.value[system], at.sd[system]) if system in at.index
                                                         else np.nan)
                for tree in trees:
                    column = ROLE_TREE if tree == main else tree
                    row[f"{metric} {label} {column} vs best peer"] = tree_vs_best_peer(sig, metric, budget, tree)
        rows.append(row)
    table = pd.DataFrame(rows)
    return table.dropna(axis="columns", how="all")  # e.g. exact search at <= 5%: no system has such a point


def per_metric_and_budget(table: pd.DataFrame, metrics=METRICS, budgets=BUDGETS) -> dict[str, pd.DataFrame]:
    """The across table cut into one table per metric and budget, each a row per system (and per
    tree against its best peer) and a column per dataset: {"ndcg@10 at <=5%": table, ...}."""
    by_dataset = table.set_index("dataset")
    out = {}
    for metric in metrics:
        for label in budgets.values():
            prefix = f"{metric} {label} "
            columns = [c for c in by_dataset.columns if c.startswith(prefix)]
            if columns:
                part = by_dataset[columns].rename(columns=lambda c: c[len(prefix):]).T.astype(object)
                out[f"{metric} at {label}"] = part.rename_axis(index="system", columns=None).reset_index()
    return out


def render_across(table: pd.DataFrame, stem: str | os.PathLike, caption: str) -> list[Path]:
    """``stem``.md and .tex: one table per metric and budget (the .tex labelled
    ``tab:<stem>-<metric>-<budget>``); ``stem``.csv: the whole table, a row per dataset."""
    stem = Path(stem)
    counts = ", ".join(f"{row.dataset} {row['test queries']:.0f}" for _, row in table.iterrows()
                       if pd.notna(row["test queries"]))
    parts = per_metric_and_budget(table)
    md = [caption, "", f"Test queries: {counts}."]
    tex = []
    for title, part in parts.items():
        md += ["", f"### {title}", "", draw.markdown_table(part, ".3f")]
        label = "tab:" + re.sub(r"[^\w+-]+", "-", f"{stem.name}-{title}").strip("-")
        tex.append(table_tex(part, f"{title}. {caption} Test queries: {counts}.", ".3f", label=label))
    outputs = {".md": "\n".join(md) + "\n", ".tex": "\n".join(tex), ".csv": table.to_csv(index=False)}
    for suffix, text in outputs.items():
        with atomic_path(stem.with_suffix(suffix)) as tmp:
            tmp.write_text(text)
    return [stem.with_suffix(s) for s in outputs]


def seed_means(summary: pd.DataFrame, metrics=METRICS, targets=CURVE_TARGETS) -> pd.DataFrame:
    """The curve the figure draws: the one run's summary, or over seeds the seed means at the KMR
    targets (mean fraction scored, mean value)."""
    if "seed" not in summary or summary.seed.nunique() < 2:
        return summary
    return pd.concat([kmr_over_seeds(summary, targets, m) for m in metrics], ignore_index=True).dropna(subset=["value"])


def build_across(results_root: str | os.PathLike, datasets, stem: str | os.PathLike, figure: str | os.PathLike,
                 seeding: dict | None = None) -> pd.DataFrame:
    """Render the table (stem.md/.tex/.csv) and the figure of ``datasets`` with cached results."""
    results = load_results(results_root, datasets, seeding)
    if not results:
        raise FileNotFoundError(f"no dataset of {list(datasets)} has cached results under {results_root}")
    table = across_table(results)
    caption = ("Across datasets: each system at the largest budget not above 5% and 10% of the documents scored, "
               "and at exact search; 'tree vs best peer': EHI's tree minus the best other system at that budget, "
               f"with that dataset's own Holm-adjusted {TEST} test (* = significant at its alpha).")
    if any("seed" in summary for summary, _ in results.values()):
        caption += (" Over training seeds: mean ± sd (each seed at its own largest point not above the budget); "
                    "'(within seed spread)': the difference is not larger than either side's sd, so no evidence.")
    render_across(table, stem, caption)
    plot_kmr_panels({name: seed_means(summary) for name, (summary, _) in results.items()}, METRICS[0], figure)
    return table
