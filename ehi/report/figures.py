"""Tables (Markdown, LaTeX, CSV) and figures (PNG) from the cached result Parquet files.

Everything here reads small tables only: the report stage never needs a model, an embedding or an
index, so it reruns on a fresh clone from what is committed under ``results/``.
"""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ehi.core.io import atomic_path
from ehi.model.tree_stats import leaf_health
from ehi.report.latex import table_tex
from ehi.search.registry import line_style

plt.switch_backend("Agg")  # files only, no display (pyplot picks its backend lazily, so this is in time)

# one colour per encoder, one line style per search method (its registry entry's), so the KMR
# plot reads as a grid
ENCODER_COLOURS = {"ehi": "tab:red", "de": "tab:blue"}


def markdown_table(df: pd.DataFrame, floatfmt: str = ".4f") -> str:
    """``df`` as a Markdown table, "–" where nothing was measured (NaN, None)."""
    cells = df.astype(object).where(df.notna(), None)
    return cells.to_markdown(index=False, floatfmt=floatfmt, missingval="–")


def render_table(df: pd.DataFrame, stem: str | os.PathLike, caption: str = "", floatfmt: str = ".4f") -> list[Path]:
    """Write ``df`` as ``stem``.md, .tex and .csv (values are rounded here, never at the source)."""
    stem = Path(stem)
    outputs = []
    renderers = {
        ".md": lambda d: (f"{caption}\n\n" if caption else "") + markdown_table(d, floatfmt) + "\n",
        ".tex": lambda d: table_tex(d, caption, floatfmt),
        ".csv": lambda d: d.to_csv(index=False),
    }
    for suffix, render in renderers.items():
        path = stem.with_suffix(suffix)
        with atomic_path(path) as tmp:
            tmp.write_text(render(df))
        outputs.append(path)
    return outputs


def _style(system: str) -> dict:
    encoder, _, search = system.partition("+")
    base = encoder.split("-")[0]  # a variant system (ehi-warm+tree) in its encoder's colour, square markers
    return {"color": ENCODER_COLOURS.get(encoder, ENCODER_COLOURS.get(base, "tab:gray")), "linestyle": line_style(search),
            "marker": "s" if encoder != base else "o"}


def save_figure(fig, path: str | os.PathLike) -> Path:
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=130, bbox_inches="tight")
    plt.close(fig)
    return Path(path)


def draw_kmr(ax, summary: pd.DataFrame, metric: str, markersize: float = 3) -> None:
    """KMR curves on ``ax``: ``metric`` against the fraction of documents scored, one line per system."""
    rows = summary[summary.metric == metric]
    for system, curve in rows.groupby("system"):
        curve = curve.sort_values("frac_visited")
        ax.plot(100 * curve.frac_visited, curve.value, markersize=markersize, label=system, **_style(system))
    ax.set_xscale("log")
    ax.set_xlabel("documents scored per query (% of corpus, log scale)")
    ax.set_ylabel(metric)
    ax.grid(True, which="both", alpha=0.3)


def plot_kmr(summary: pd.DataFrame, metric: str, path: str | os.PathLike, title: str = "") -> Path:
    """KMR curve: ``metric`` against the fraction of documents scored, one line per system."""
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    draw_kmr(ax, summary, metric)
    ax.set_title(title or f"KMR curve: {metric}")
    ax.legend(fontsize=8, ncol=2)
    return save_figure(fig, path)


def plot_kmr_panels(summaries: dict[str, pd.DataFrame], metric: str, path: str | os.PathLike) -> Path:
    """One small KMR panel per dataset, side by side (three to a row), one legend for all."""
    cols = min(3, len(summaries))
    rows = -(-len(summaries) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 2.9 * rows + 0.6), squeeze=False)
    for ax, (name, summary) in zip(axes.ravel(), summaries.items()):
        draw_kmr(ax, summary, metric, markersize=2)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("% of documents scored (log)", fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in axes.ravel()[len(summaries):]:
        ax.axis("off")
    handles = {}
    for ax in axes.ravel():  # one legend entry per system over every panel
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    fig.legend(handles.values(), handles.keys(), loc="lower center", ncol=min(6, len(handles)), fontsize=7,
               bbox_to_anchor=(0.5, 0.0))
    fig.suptitle(f"KMR per dataset: {metric}", fontsize=10)
    fig.tight_layout(rect=(0, 0.08 + 0.02 * (len(handles) > 6), 1, 1))
    return save_figure(fig, path)


def plot_leaf_sizes(sizes_by_model: dict[str, np.ndarray], path: str | os.PathLike) -> Path:
    """Histogram of documents per leaf, one panel per trained tree, with the mean marked."""
    n = max(len(sizes_by_model), 1)
    fig, axes = plt.subplots(1, n, figsize=(4.2 * n, 3.4), squeeze=False)
    for ax, (name, sizes) in zip(axes[0], sizes_by_model.items()):
        sizes = np.asarray(sizes)
        ax.hist(sizes, bins=min(40, max(len(sizes) // 2, 5)), color="tab:red", alpha=0.8)
        ax.axvline(sizes.mean(), color="k", linestyle="--", label=f"mean {sizes.mean():.1f}")
        status = leaf_health(sizes)[0]
        ax.set_title(f"{name}: {len(sizes)} leaves, {int((sizes == 0).sum())} empty"
                     + ("" if status == "ok" else f"\n{status.upper()}"), fontsize=9,
                     color="black" if status == "ok" else "tab:red")
        ax.set_xlabel("documents in leaf")
        ax.set_ylabel("leaves")
        ax.legend(fontsize=8)
    return save_figure(fig, path)


TRAINING_PANELS = {
    "loss": "total loss", "siamese": "L_siamese", "indexing": "L_indexing", "intra_leaf": "L_intra-leaf",
    "pos_in_beam": "train positives inside the query's beam", "leaf_max_over_mean": "largest leaf / mean leaf",
    # drawn only when the log has them (train.indexer_steps, train.dev_eval): older figures are unchanged
    "tree_updates": "tree-only updates (L_indexing)",
    "dev_ndcg@10": "dev nDCG@10, exact search", "dev_recall@100": "dev Recall@100, exact search",
    "dev_tree_ndcg@10": "dev nDCG@10, tree at the dev budget", "dev_tree_recall@100": "dev Recall@100, tree at the dev budget",
}


def plot_training(logs: dict[str, pd.DataFrame], path: str | os.PathLike) -> Path:
    """Training curves per epoch: each loss term and the tree diagnostics, one line per model."""
    from matplotlib.ticker import MaxNLocator

    terms = [t for t in TRAINING_PANELS if any(t in df and df[t].notna().any() for df in logs.values())]
    cols = min(3, len(terms))
    rows = -(-len(terms) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.0 * rows), squeeze=False)
    for ax, term in zip(axes.ravel(), terms):
        for name, df in logs.items():
            if term in df and df[term].notna().any():
                ax.plot(df.epoch, df[term], marker="o", label=name, color=ENCODER_COLOURS.get(name, "tab:gray"))
        ax.set_title(TRAINING_PANELS[term], fontsize=9)
        ax.set_xlabel("epoch")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.legend(fontsize=7)
    for ax in axes.ravel()[len(terms):]:
        ax.axis("off")
    fig.tight_layout()
    return save_figure(fig, path)


def plot_ablation(table: pd.DataFrame, value_cols: list[str], path: str | os.PathLike, title: str) -> Path:
    """Horizontal bars, one panel per column (e.g. the tree at a budget and exact search): one bar
    per ablation variant, the main setting highlighted. A loss can move the two in opposite ways,
    so they are drawn side by side."""
    fig, axes = plt.subplots(1, len(value_cols), figsize=(4.2 * len(value_cols) + 2.2, 0.45 * len(table) + 1.2),
                             sharey=True, squeeze=False)
    colours = ["tab:red" if v == "main" else "tab:gray" for v in table.variant]
    for ax, col in zip(axes[0], value_cols):
        ax.barh(table.variant, table[col], color=colours)
        for y, v in enumerate(table[col]):
            if np.isfinite(v):
                ax.text(v, y, f" {v:.3f}", va="center", fontsize=8)
        ax.set_xlabel(col)
    axes[0][0].invert_yaxis()
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path)
