"""The KMR figures: a metric against the fraction of the corpus scored (or of the work), one line
per system, the table's budgets marked; a dataset's figure (with its seed band) and the panels of
several datasets side by side."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from ehi.report.figures import TABLE_BUDGETS, _style, plt, save_figure
from ehi.report.seed_tables import draw_seed_bands
from ehi.report.styles import is_ehi_search, label as system_label, note_beyond, percent_axis


def _same_curves(rows: pd.DataFrame) -> dict[str, str]:
    """{system: the system drawn before it with exactly the same points}: one line hides the other."""
    seen, same = {}, {}
    for system, curve in rows.groupby("system"):
        key = tuple(map(tuple, curve.sort_values("frac_visited")[["frac_visited", "value"]].round(12).to_numpy()))
        if key in seen:
            same[system] = seen[key]
        seen.setdefault(key, system)
    return same


def draw_kmr(ax, summary: pd.DataFrame, metric: str, markersize: float = 3, axis: str = "documents scored") -> None:
    """KMR curves on ``ax``: ``metric`` against the fraction of ``axis`` (its frac_visited), one line per system;
    EHI's own search drawn thick and on top, the table's budgets marked, identical curves named."""
    rows = summary[summary.metric == metric]
    same = _same_curves(rows)
    for system, curve in rows.groupby("system"):
        curve = curve.sort_values("frac_visited")
        # the summary holds curves, not rankings: two systems can share every point yet rank apart
        label = f"{system_label(system)} (same curve as {same[system]})" if system in same else system_label(system)
        ax.plot(100 * curve.frac_visited, curve.value, markersize=markersize * (1.3 if is_ehi_search(system) else 1),
                label=label, **_style(system))
    for budget in TABLE_BUDGETS:
        ax.axvline(100 * budget, color="0.6", linewidth=0.8, linestyle=(0, (1, 2)), zorder=1)
    percent_axis(ax, f"{axis} per query (% of corpus, log scale)")
    ax.set_ylabel(metric)
    ax.grid(True, which="both", alpha=0.3)


def kmr_figure(summary: pd.DataFrame, metric: str, title: str = "", axis: str = "documents scored",
               seeded: pd.DataFrame | None = None):
    """The KMR figure: ``metric`` against the fraction of ``axis``, one line per system; with
    ``seeded`` (every training seed's summary rows, a ``seed`` column) each system run with more
    than one seed shaded by its min-max over seeds (:func:`ehi.report.seed_tables.draw_seed_bands`)."""
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    draw_kmr(ax, summary, metric, axis=axis)
    if seeded is not None:
        draw_seed_bands(ax, seeded, metric, summary.system.unique())
    ax.set_title(title or f"KMR curve: {metric}")
    note_beyond(fig, summary.system.unique(), below=True)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)  # outside the curves
    return fig


def plot_kmr(summary: pd.DataFrame, metric: str, path: str | os.PathLike, title: str = "",
             axis: str = "documents scored", seeded: pd.DataFrame | None = None) -> Path:
    """:func:`kmr_figure`, saved to ``path``."""
    return save_figure(kmr_figure(summary, metric, title, axis, seeded), path)


def plot_kmr_panels(summaries: dict[str, pd.DataFrame], metric: str, path: str | os.PathLike) -> Path:
    """One small KMR panel per dataset, side by side (three to a row), one legend for all."""
    cols = min(3, len(summaries))
    rows = -(-len(summaries) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 2.9 * rows + 0.6), squeeze=False, sharex=True)
    for ax, (name, summary) in zip(axes.ravel(), summaries.items()):
        draw_kmr(ax, summary, metric, markersize=2)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("% of documents scored (log)", fontsize=8)
        ax.xaxis.set_tick_params(labelbottom=True)  # every panel keeps its ticks under the shared axis
        ax.tick_params(labelsize=7)
    for ax in axes.ravel()[len(summaries):]:
        ax.axis("off")
    handles = {}
    for ax in axes.ravel():  # one legend entry per system over every panel
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    fig.legend(handles.values(), handles.keys(), loc="lower center", ncol=min(6, len(handles)), fontsize=7,
               bbox_to_anchor=(0.5, 0.0))
    fig.suptitle(f"KMR per dataset ({', '.join(summaries)}): {metric}", fontsize=10)
    note_beyond(fig, {s for summary in summaries.values() for s in summary.system.unique()})
    fig.tight_layout(rect=(0, 0.08 + 0.02 * (len(handles) > 6), 1, 1))
    return save_figure(fig, path)
