"""Tables (Markdown, LaTeX, CSV) and figures (PNG) from the cached result Parquet files: small
tables only (never a model, an embedding or an index), so the report reruns on a fresh clone from
what is committed under ``results/``."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ehi.core.io import atomic_path
from ehi.model.tree_stats import leaf_health
from ehi.evaluate.roles import DE, EHI
from ehi.search.registry import EXACT_KIND
from ehi.report.latex import table_tex
from ehi.report.styles import note_variants, style, tree_colour

plt.switch_backend("Agg")  # files only, no display (pyplot picks its backend lazily, so this is in time)

# the training figure's models, in the colours of their own search in the KMR figures
ENCODER_COLOURS = {EHI: tree_colour(), DE: style(f"{DE}+{EXACT_KIND}")["color"]}
TABLE_BUDGETS = (0.01, 0.02, 0.05, 0.1, 0.2)  # the KMR table's columns, marked on its figures


def markdown_table(df: pd.DataFrame, floatfmt: str = ".4f") -> str:
    """``df`` as a Markdown table, "–" where nothing was measured (NaN, None)."""
    cells = df.astype(object).where(df.notna(), None)
    return cells.to_markdown(index=False, floatfmt=floatfmt, missingval="–")


def html_table(df: pd.DataFrame, caption: str = "", floatfmt: str = ".4f", note: str = "") -> str:
    """``df`` as an HTML page for ``snakemake --report`` (which shows HTML in the page; Markdown and
    CSV only as a download): the caption above, ``note`` under, "–" where nothing was measured."""
    import html

    table = df.to_html(index=False, na_rep="–", border=0, float_format=lambda v: format(v, floatfmt)) if len(df.columns) else ""
    style = "<style>table{border-collapse:collapse;font:13px sans-serif}th,td{padding:2px 8px;text-align:right}" \
            "th{border-bottom:1px solid #888}</style>"
    return "".join([style, f"<p>{html.escape(caption)}</p>" if caption else "", table,
                    f"<p>{html.escape(note)}</p>" if note else ""]) + "\n"


def render_table(df: pd.DataFrame, stem: str | os.PathLike, caption: str = "", floatfmt: str = ".4f",
                 note: str = "", empty: str = "No rows.") -> list[Path]:
    """Write ``df`` as ``stem``.md, .tex, .csv and .html (values are rounded here, never at the source),
    ``note`` under the table in words; a table with no rows is its caption and ``empty`` alone."""
    stem = Path(stem)
    outputs = []
    note = note if len(df) else empty
    body = markdown_table(df, floatfmt) + (f"\n\n{note}" if note else "") if len(df) else note
    renderers = {
        ".md": lambda d: (f"{caption}\n\n" if caption else "") + body + "\n",
        ".tex": lambda d: table_tex(d, caption, floatfmt, label=f"tab:{stem.name}", note=note),
        ".csv": lambda d: d.to_csv(index=False),
        ".html": lambda d: html_table(d if len(d) else d.iloc[:, :0], caption, floatfmt, note),
    }
    for suffix, render in renderers.items():
        path = stem.with_suffix(suffix)
        with atomic_path(path) as tmp:
            tmp.write_text(render(df))
        outputs.append(path)
    return outputs


def _style(system: str) -> dict:
    return style(system)


def save_figure(fig, path: str | os.PathLike) -> Path:
    with atomic_path(path) as tmp:
        # no metadata (matplotlib's version): equal figures are equal bytes, so a rerun leaves git clean
        fig.savefig(tmp, format="png", dpi=130, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return Path(path)


def plot_leaf_sizes(sizes_by_model: dict[str, np.ndarray], path: str | os.PathLike, title: str = "",
                    names: dict[str, str] | None = None) -> Path:
    """Histogram of documents per leaf, one panel per trained tree, with the mean marked; the panels
    share their axes, so the trees compare at a glance."""
    n = max(len(sizes_by_model), 1)
    cols = min(3, n)  # three to a row: a long variant name keeps to its own panel
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.4 * cols, 3.5 * rows), squeeze=False, sharex=True, sharey=True)
    for ax in axes.ravel()[len(sizes_by_model):]:
        ax.axis("off")
    for ax, (name, sizes) in zip(axes.ravel(), sizes_by_model.items()):
        sizes = np.asarray(sizes)
        ax.hist(sizes, bins=min(40, max(len(sizes) // 2, 5)), color=tree_colour(), alpha=0.8)
        ax.axvline(sizes.mean(), color="k", linestyle="--", label=f"mean {sizes.mean():.1f}")
        status = leaf_health(sizes)[0]
        ax.set_title(f"{(names or {}).get(name, name)}\n{len(sizes)} leaves, {int((sizes == 0).sum())} empty"
                     + ("" if status == "ok" else f": {status.upper()}"), fontsize=9,
                     color="black" if status == "ok" else "tab:red")
        ax.set_xlabel("documents in leaf")
        ax.set_ylabel("leaves")
        ax.legend(fontsize=8)
        ax.xaxis.set_tick_params(labelbottom=True)
        ax.yaxis.set_tick_params(labelleft=True)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    note_variants(fig, names or {}, sizes_by_model)
    return save_figure(fig, path)


TRAINING_PANELS = {
    "loss": "total loss", "siamese": "L_siamese", "indexing": "L_indexing", "intra_leaf": "L_intra-leaf",
    "pos_in_beam": "train positives inside the query's beam", "leaf_max_over_mean": "largest leaf / mean leaf",
    # drawn only when the log has them (train.indexer_steps, train.dev_eval): older figures are unchanged
    "tree_updates": "tree-only updates (L_indexing)",
    "dev_ndcg@10": "dev nDCG@10, exact search", "dev_recall@100": "dev Recall@100, exact search",
    "dev_tree_ndcg@10": "dev nDCG@10, tree at the dev budget", "dev_tree_recall@100": "dev Recall@100, tree at the dev budget",
}


FRACTION_PANELS = {"pos_in_beam"}  # shares near 1: drawn on at least MIN_FRACTION_SPAN, not on their own ulps
MIN_FRACTION_SPAN = 0.05


EXACT_DEV = {"dev_ndcg@10", "dev_recall@100"}  # exact search on dev: moves only when the encoder does
FROZEN_NOTE = "\n(flat: the encoder is frozen)"


def _unchanged(logs: dict[str, pd.DataFrame], term: str) -> bool:
    """An exact-search dev panel whose every model's values are one number over two or more epochs:
    no encoder weight moved (every layer frozen), so the panel says so instead of looking broken."""
    series = [df[term].dropna() for df in logs.values() if term in df and df[term].notna().any()]
    return term in EXACT_DEV and bool(series) and all(len(v) > 1 and v.nunique() == 1 for v in series)


def kept_epoch(log: pd.DataFrame) -> int | None:
    """The epoch ``select: dev`` keeps (the tree's dev nDCG@10 for EHI, exact search's for DE)."""
    from ehi.train.selection import best_epoch, log_selection_key

    key = log_selection_key(log.columns)
    return best_epoch(log.to_dict("records"), key) if key in log else None


def plot_training(logs: dict[str, pd.DataFrame], path: str | os.PathLike, title: str = "") -> Path:
    """Training curves per epoch: each loss term and the tree diagnostics, one line per model, the
    epoch dev selection keeps marked on every panel."""
    from matplotlib.ticker import MaxNLocator

    terms = [t for t in TRAINING_PANELS if any(t in df and df[t].notna().any() for df in logs.values())]
    kept = {name: kept_epoch(df) for name, df in logs.items()}
    cols = min(3, len(terms))
    rows = -(-len(terms) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.0 * rows), squeeze=False, sharex=True)  # epochs align
    for ax, term in zip(axes.ravel(), terms):
        for name, df in logs.items():
            if term in df and df[term].notna().any():
                colour = ENCODER_COLOURS.get(name, "tab:gray")
                ax.plot(df.epoch, df[term], marker="o", label=name, color=colour)
                if kept[name] is not None:
                    ax.axvline(kept[name], color=colour, linestyle="--", linewidth=1, alpha=0.7,
                               label=f"{name}: kept epoch {kept[name]} (best dev)")
        if term in FRACTION_PANELS:
            low, _ = ax.get_ylim()
            top = 1.0 + MIN_FRACTION_SPAN / 10  # a share never exceeds 1; its markers stay whole
            ax.set_ylim(min(low, 1.0 - MIN_FRACTION_SPAN), top)
            ax.ticklabel_format(axis="y", useOffset=False)
        ax.set_title(TRAINING_PANELS[term] + (FROZEN_NOTE if _unchanged(logs, term) else ""), fontsize=9)
        ax.set_xlabel("epoch")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.xaxis.set_tick_params(labelbottom=True)
    for ax in axes.ravel()[len(terms):]:
        ax.axis("off")
    handles = {}
    for ax in axes.ravel():  # one legend for the figure: every panel draws the same models
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    fig.legend(handles.values(), handles.keys(), loc="lower center", ncol=min(4, len(handles)), fontsize=8,
               bbox_to_anchor=(0.5, 0.0), frameon=False)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.05 if rows > 1 else 0.12, 1, 1))
    return save_figure(fig, path)


def _interval(sig: pd.DataFrame | None, variant: str, col: str) -> tuple[float, float] | None:
    """The variant's value interval in panel ``col`` (main + the CI of variant - main), if tested."""
    if sig is None or sig.empty or "ci_low" not in sig:
        return None
    search, metric = col.split()[0], col.split()[1]  # "tree ndcg@10 @10%" / "exact ndcg@10"
    rows = sig[(sig.variant == variant) & (sig.system_a.str.split("+").str[-1] == search) & (sig.metric == metric)]
    rows = rows[rows.test == "randomization"] if "test" in rows and (rows.test == "randomization").any() else rows
    if rows.empty:
        return None
    row = rows.iloc[0]
    return row.mean_b + row.ci_low, row.mean_b + row.ci_high


def plot_ablation(table: pd.DataFrame, value_cols: list[str], path: str | os.PathLike, title: str,
                  sig: pd.DataFrame | None = None, names: dict[str, str] | None = None) -> Path:
    """One dot per ablation variant, one panel per column (e.g. the tree at a budget and exact
    search; a loss can move the two in opposite ways), the main setting's value as a line. The axis
    spans the values, not zero, so differences of a hundredth show; with ``sig`` (the ablation
    significance, with ``ci_low``/``ci_high`` of variant - main) each variant carries its interval."""
    fig, axes = plt.subplots(1, len(value_cols), figsize=(4.2 * len(value_cols) + 2.2, 0.45 * len(table) + 1.4),
                             sharey=True, squeeze=False)
    ys = np.arange(len(table))
    for ax, col in zip(axes[0], value_cols):
        values = table[col].to_numpy(dtype=float)
        spans = [values[np.isfinite(values)]]
        for y, variant, v in zip(ys, table.variant, values):
            main = variant == "main"
            interval = None if main else _interval(sig, variant, col)
            if interval is not None:
                ax.plot(interval, [y, y], color="0.45", linewidth=2, solid_capstyle="butt")
                spans.append(np.asarray(interval))
            if np.isfinite(v):
                ax.plot([v], [y], "o", color=tree_colour() if main else "0.25", markersize=7 if main else 5)
                ax.annotate(f"{v:.3f}", (v, y), xytext=(0, 6), textcoords="offset points", ha="center", fontsize=7)
        main_values = table.loc[table.variant == "main", col]
        if len(main_values) and np.isfinite(main_values.iloc[0]):
            ax.axvline(main_values.iloc[0], color=tree_colour(), linewidth=0.8, linestyle="--")
        finite = np.concatenate(spans)
        if finite.size:
            lo, hi = finite.min(), finite.max()
            pad = max(0.15 * (hi - lo), 0.005)
            ax.set_xlim(lo - pad, hi + pad)
        ax.set_xlabel(col + ("" if sig is None else "\n(bars: 95% interval of variant - main, over queries)"), fontsize=8)
        ax.grid(True, axis="x", alpha=0.3)
    axes[0][0].set_yticks(ys, [(names or {}).get(v, v) for v in table.variant])
    note_variants(fig, names or {}, table.variant)
    axes[0][0].set_ylim(len(table) - 0.5, -0.7)
    fig.suptitle(title + " (axis not from zero)", fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path)
