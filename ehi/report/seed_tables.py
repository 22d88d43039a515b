"""The main KMR table and figure over training seeds: each system's mean at each budget, with its
spread (ehi.evaluate.seeds says how seeds enter the results), and the seed band the KMR figure
draws under each curve run with more than one seed."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from ehi.core.io import read_table
from ehi.evaluate.seeds import kmr_over_seeds
from ehi.evaluate.variant_systems import relabel


def seeded_main_summary(results: Path, seed_replicas: dict[str, dict[str, int]], specs) -> pd.DataFrame:
    """:func:`seeded_summary` of the summaries under ``results`` (a report across datasets reads them here)."""
    files = {path: Path(results) / path / "summary.parquet" for paths in seed_replicas.values() for path in paths}
    return seeded_summary({path: read_table(file, "summary") for path, file in files.items() if file.exists()},
                          seed_replicas, specs)


def seeded_summary(summaries: dict[str, pd.DataFrame], seed_replicas: dict[str, dict[str, int]], specs) -> pd.DataFrame:
    """The main setting's summary rows of every seed (variant systems relabelled from the replica of
    their variant with the same seed), with a ``seed`` column; ``summaries``: {replica path: its
    summary}, a replica not yet run absent (left out); ``seed_replicas``: {variant: {replica path: its
    seed}} (:func:`ehi.evaluate.seeds.replicas`)."""
    frames = []
    for path, seed in seed_replicas["main"].items():
        if path not in summaries:
            continue
        extra = []
        for spec in specs:
            same_seed = [p for p, s in seed_replicas.get(spec.variant, {}).items() if s == seed and p in summaries]
            if same_seed:
                extra.append(relabel(summaries[same_seed[0]].assign(variant=spec.variant), spec))
        frames.append(pd.concat([summaries[path].assign(variant="main"), *extra], ignore_index=True).assign(seed=seed))
    return pd.concat(frames, ignore_index=True)


def _cell(mean: float, sd: float, n_seeds: int, one_seed_spread: bool = True) -> str:
    if np.isnan(mean):
        return "–"
    return f"{mean:.3f} ± {sd:.3f}" if n_seeds > 1 or one_seed_spread else f"{mean:.3f}"


def kmr_over_seeds_wide(summary: pd.DataFrame, metrics, targets, one_seed_spread: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(system x target table of 'mean ± sd' cells per metric, the long table with mean, sd, min, max,
    n_seeds and mean fraction visited of every cell), best-first like :func:`ehi.report.tables.kmr_wide`.
    ``one_seed_spread`` False: a system run once (deterministic) shows its value alone, no '± 0.000'."""
    long = pd.concat([kmr_over_seeds(summary, targets, m) for m in metrics], ignore_index=True)
    pct = {t: f"{100 * t:g}%" for t in targets}
    frames = []
    for metric in metrics:
        rows = long[long.metric == metric]
        cells = [_cell(m, s, n, one_seed_spread) for m, s, n in zip(rows.value, rows.sd, rows.n_seeds)]
        wide = rows.assign(cell=cells).pivot(index="system", columns="target", values="cell")
        wide.columns = [pct[t] for t in wide.columns]
        seeds = rows.groupby("system").n_seeds.max()
        frames.append(wide.reset_index().assign(metric=metric, seeds=lambda d: d.system.map(seeds)))
    table = pd.concat(frames, ignore_index=True)
    return table[["metric", "system", "seeds", *pct.values()]], long


def plot_kmr_over_seeds(long: pd.DataFrame, metric: str, path: str | os.PathLike, title: str = "",
                        axis: str = "documents scored") -> Path:
    """Each system's seed mean at the table's budgets, min-max over seeds as error bars."""
    from ehi.report.figures import _style, plt, save_figure
    from ehi.report.styles import label, note_beyond, percent_axis

    fig, ax = plt.subplots(figsize=(7.2, 4.4))
    rows = long[(long.metric == metric) & long.value.notna()]
    for system, curve in rows.groupby("system"):
        curve = curve.sort_values("frac_visited")
        style = _style(system)
        # seeds that agree give a mean a rounding error outside [min, max]: clip the bars at zero
        below, above = (curve.value - curve["min"]).clip(lower=0), (curve["max"] - curve.value).clip(lower=0)
        ax.errorbar(100 * curve.frac_visited, curve.value, yerr=[below, above],
                    capsize=2, label=f"{label(system)} ({int(curve.n_seeds.max())} seeds)", **style)
    percent_axis(ax, f"{axis} per query (% of corpus, log scale; seed mean)")
    ax.set_ylabel(f"{metric} (mean, min-max over seeds)")
    ax.grid(True, which="both", alpha=0.3)
    ax.set_title(title or f"KMR over seeds: {metric}")
    note_beyond(fig, rows.system.unique())
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    return save_figure(fig, path)


def seed_band_label(n_seeds: int) -> str:
    return f"shaded: min-max over {n_seeds} training seeds"


def draw_seed_bands(ax, seeded: pd.DataFrame, metric: str, systems) -> int:
    """Under each of ``systems`` that ``seeded`` (summary rows with a ``seed`` column) holds for more
    than one seed: the min-max of ``metric`` over its seeds at each budget every seed ran, at the
    seeds' mean fraction; one legend entry says what the shading is. Returns the most seeds a band
    spans (0: none drawn, a system the seed does not change has no band)."""
    from ehi.report.styles import colour

    rows = seeded[(seeded.metric == metric) & seeded.system.isin(list(systems)) & seeded.value.notna()]
    most = 0
    for system, runs in rows.groupby("system"):
        n_seeds = runs.seed.nunique()
        if n_seeds < 2:
            continue
        points = runs.groupby("budget_value").agg(frac=("frac_visited", "mean"), low=("value", "min"),
                                                  high=("value", "max"), seeds=("seed", "nunique"))
        points = points[points.seeds == n_seeds].sort_values("frac")  # a budget some seed lacks: no band there
        ax.fill_between(100 * points.frac, points.low, points.high, color=colour(system), alpha=0.18, linewidth=0,
                        zorder=1)
        most = max(most, n_seeds)
    if most:
        ax.fill_between([], [], [], color="0.5", alpha=0.3, linewidth=0, label=seed_band_label(most))
    return most
