"""Reading the trained-index benchmark's curves: ratios at equal quality (nDCG@10 and Recall@10 on
the judgements, k-NN recall@10 against exact search), single-query p99 at equal fraction scored,
the Pareto figure (QPS against nDCG@10, and against k-NN recall@10 where the curves have it) and
the Markdown tables, and the files a run writes (:func:`write_outputs`).

A tree system is one whose method the registry marks as EHI's own search (``tree``, ``tree-pq``, or
a plugin's tree: :func:`ehi.evaluate.roles.is_tree`); every other system is a peer, whichever encoder it is built on (``de+`` when the run trained DE, else ``ehi+``:
the baselines on the vectors the tree routes).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from ehi.core.errors import ConfigError
from ehi.core.io import staged_files

from benchmarks.search import _interp
from benchmarks.trained_costs import cost_markdown
from benchmarks.trained_quality import KNN_EPSILON

TARGETS = (0.90, 0.95, 0.99)  # of the lower of the two systems' best score on the metric
METRICS = ("ndcg@10", "recall@10", "knn_recall@10")  # the quality axes systems are matched on
FIGURE_METRICS = ("ndcg@10", "knn_recall@10")  # one row of the Pareto figure each
NAMES = {"ndcg@10": "nDCG@10", "recall@10": "Recall@10", "knn_recall@10": "k-NN recall@10"}
QUALITY_NOTE = ("nDCG@10 and Recall@10 read the test queries' judgements; k-NN recall@10 reads exact search on "
                "the same vectors: the share of a system's top 10 within the 10th exact neighbour's distance "
                f"(+{KNN_EPSILON:g}), ann-benchmarks' measure of an index. Targets are shares of the lower of the "
                "two systems' best on that metric.")
ROUNDS_NOTE = ("qps_ratio is the ratio of the two points' median QPS over the rounds; qps_ratio_rounds its range, "
               "from the tree's slowest round over the peer's fastest to the other way round: a ratio whose range "
               "spans 1.0 is inside the timing noise.")
SPREAD = ["qps_ratio_low", "qps_ratio_high"]  # a ratio's range over the rounds, where curves keep them
COMPRESSED = ("tree-pq", "faiss-ivfpq", "scann-ah", "ivf-lists-pq")  # methods compared with each other
MATCHED_COLUMNS = ["ehi", "peer", "metric", "target_share", "target", "ndcg@10", "ehi_qps", "peer_qps", "qps_ratio",
                   "p50_ratio", "p99_ratio", "ehi_frac", "peer_frac"]
SAME_LISTS = re.compile(r"faiss-ivf-L(\d+)")  # IVF-Flat with as many lists as ehi+tree has leaves


def method(system: str) -> str:
    return system.split("+", 1)[1]


def is_tree(system: str) -> bool:
    """EHI's trained index searched, as the registry says (the benchmark's own peers, such as
    ``faiss-ivf-L288``, are no registry kinds: peers)."""
    from ehi.evaluate.roles import is_tree as registry_tree
    from ehi.search.registry import searches

    return method(system) in searches() and registry_tree(system)


def fastest_reaching(curve: pd.DataFrame, target: float, metric: str = "ndcg@10") -> pd.Series | None:
    """The measured point of highest QPS whose ``metric`` reaches ``target`` (None if none does)."""
    ok = curve[curve[metric] >= target - 1e-12]
    return None if ok.empty else ok.loc[ok.qps.idxmax()]


def check_quality(curves: pd.DataFrame, metrics=METRICS) -> None:
    """Refuse a system whose best point on a matched metric scores 0: every target share of a best
    of 0 is 0, which every point of the other system reaches, so a ratio "at equal nDCG@10" would
    compare the fastest points of two sweeps (what a max_frac of 1e-300 leaves: one budget a sweep)."""
    for metric in (m for m in metrics if m in curves):
        best = curves.groupby("system", sort=False)[metric].max()
        if (best <= 0).any():
            raise ConfigError(f"trained_benchmark: the best {NAMES.get(metric, metric)} of {', '.join(best.index[best <= 0])} "
                              "over the sweep is 0: no equal quality to match the systems at; raise "
                              "trained_benchmark.max_frac (--max-frac), which cuts each sweep past that fraction scored")


def matched(curves: pd.DataFrame, targets=TARGETS, metrics=("ndcg@10",)) -> pd.DataFrame:
    """Tree system / peer at equal quality: QPS and p50/p99 ratios at each target share of each
    metric's shared best (long format; ``metric`` names the axis, ``target`` its value, and the
    ``ndcg@10`` column keeps the nDCG@10 target's value for the nDCG rows). Float trees meet float
    peers, PQ trees compressed peers; ScaNN-AH (compressed, but re-ranked exactly) meets both.
    Curves of a system that scores 0 at best are refused (:func:`check_quality`)."""
    check_quality(curves, metrics)
    return pd.concat([_matched_on(curves, targets, m) for m in metrics if m in curves], ignore_index=True)


def _matched_on(curves: pd.DataFrame, targets, metric: str) -> pd.DataFrame:
    out = []
    by = dict(tuple(curves.groupby("system", sort=False)))
    for tree in [s for s in by if is_tree(s)]:
        compressed = method(tree) in COMPRESSED
        peers = [p for p in by if not is_tree(p)
                 and ((method(p) in COMPRESSED) == compressed or method(p) == "scann-ah")]
        for peer in peers:
            ceiling = min(by[tree][metric].max(), by[peer][metric].max())
            for f in targets:
                e, p = (fastest_reaching(by[s], f * ceiling, metric) for s in (tree, peer))
                out.append({"ehi": tree, "peer": peer, "metric": metric, "target_share": f, "target": f * ceiling,
                            "ndcg@10": f * ceiling if metric == "ndcg@10" else np.nan,
                            "ehi_qps": e.qps, "peer_qps": p.qps, "qps_ratio": e.qps / p.qps,
                            "p50_ratio": e.p50_ms / p.p50_ms, "p99_ratio": e.p99_ms / p.p99_ms,
                            "ehi_frac": e.frac_scored, "peer_frac": p.frac_scored, **round_spread(e, p)})
    return pd.DataFrame(out, columns=MATCHED_COLUMNS + spread_columns(curves))  # even with no tree to match


def spread_columns(curves: pd.DataFrame) -> list[str]:
    """The range columns a table of ratios over ``curves`` has: none for curves timed before the
    rounds were kept."""
    return SPREAD if "qps_min" in curves else []


def round_spread(e: pd.Series, p: pd.Series) -> dict:
    """The QPS ratio's range over the timing rounds: the tree's slowest round over the peer's
    fastest, and the other way round (curves timed before rounds were kept have none)."""
    if "qps_min" not in e:
        return {}
    return {"qps_ratio_low": e.qps_min / p.qps_max, "qps_ratio_high": e.qps_max / p.qps_min}


def at_fraction(curves: pd.DataFrame, tree: str, peer: str, max_frac: float = 0.25) -> pd.DataFrame:
    """Single-query p50/p99 of ``tree`` at each of its measured budgets up to ``max_frac`` scored,
    against ``peer``'s at the same fraction: log-linear in the fraction between the peer's two
    measured points around it (NaN outside the peer's range: never extrapolated). The issue's
    latency check is the p99 ratio here."""
    by = dict(tuple(curves.groupby("system", sort=False)))
    if tree not in by or peer not in by:
        return pd.DataFrame()
    rows = []
    for _, e in by[tree].sort_values("frac_scored").iterrows():
        if e.frac_scored > max_frac:
            break
        p = _interp(by[peer], "frac_scored", e.frac_scored, ["p50_ms", "p99_ms", "qps"], log_x=True)
        rows.append({"ehi": tree, "peer": peer, "budget_value": int(e.budget_value), "frac_scored": e.frac_scored,
                     "ehi_p99_ms": e.p99_ms, "peer_p99_ms": p["p99_ms"], "p99_ratio": e.p99_ms / p["p99_ms"],
                     "p50_ratio": e.p50_ms / p["p50_ms"], "qps_ratio": e.qps / p["qps"]})
    return pd.DataFrame(rows)


def pareto_figure(curves: pd.DataFrame, path: Path, title: str = "", zoom: float = 0.85) -> Path:
    """QPS (log) against each quality axis of :data:`FIGURE_METRICS` the curves have (nDCG@10 on
    the judgements, k-NN recall@10 against exact search), one row of panels each and one line per
    system through its Pareto-optimal points: the whole sweep, and beside it the top (from ``zoom``
    of the best up), where the ratio table's targets lie (dotted lines) and the near-exact systems
    (HNSW) would otherwise be one dot. Trees are drawn bold and solid, peers thin and dashed, so the
    two families read apart in any palette, and each tree's line is named at its best point.
    A system measured over several builds (``--every-build``) is one line, the front over all of
    them, as ann-benchmarks draws an algorithm over its parameters."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ehi.report.styles import label, note_beyond

    metrics = [m for m in FIGURE_METRICS if m in curves and curves[m].notna().any()]
    fig, axes = plt.subplots(len(metrics), 2, figsize=(11, 4.6 * len(metrics)), squeeze=False,
                             gridspec_kw={"width_ratios": [1, 1.2]})
    for row, metric in zip(axes, metrics):
        _pareto_row(row, curves, metric, zoom)
    axes[0][0].set_ylabel(f"queries per second (batched, {int(curves.threads.iloc[0])} thread)")
    for ax, _ in axes[1:]:
        ax.set_ylabel(axes[0][0].get_ylabel())
    if title:
        fig.suptitle(title, fontsize=10)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, [label(n) for n in labels], loc="center left", bbox_to_anchor=(0.99, 0.5), fontsize=8,
               title="system (Pareto front)", title_fontsize=8)
    note_beyond(fig, curves.system.unique())
    fig.tight_layout()
    fig.savefig(path, dpi=150, bbox_inches="tight")
    plt.close(fig)
    return Path(path)


def _pareto_row(axes, curves: pd.DataFrame, metric: str, zoom: float) -> None:
    """One quality axis: the whole sweep's fronts (``axes[0]``, labelled by system) and their top."""
    from ehi.report.styles import label
    from ehi.report.styles import style as system_style

    best = curves[metric].max()
    for name, curve in curves.groupby("system", sort=False):
        curve = curve.sort_values([metric, "qps"], ascending=False)  # of equal quality the fastest first
        front = curve[curve.qps >= curve.qps.cummax()].drop_duplicates(metric).sort_values(metric)
        tree = is_tree(name)
        look = system_style(name)  # the colour and marker it has in every figure of the report
        style = {"color": look["color"], "marker": look["marker"], "ms": 4 if tree else 3, "lw": 2.5 if tree else 1.2,
                 "ls": "-" if tree else "--", "zorder": 3 if tree else 2}
        axes[0].plot(front[metric], front.qps, label=name, **style)
        if tree and not front.empty:  # the tree's lines marked in the figure itself, not only in the legend
            axes[0].annotate(label(name), (front[metric].iloc[-1], front.qps.iloc[-1]), xytext=(-3, 6),
                             textcoords="offset points", ha="right", va="bottom", fontsize=7, fontweight="bold",
                             color=look["color"], bbox={"fc": "white", "ec": "none", "alpha": 0.75, "pad": 0.5})
        top = front[front[metric] >= zoom * best]
        axes[1].plot(top[metric], top.qps, **style)
    for f in TARGETS:
        axes[1].axvline(f * best, color="grey", lw=0.8, ls=":", zorder=1)
        axes[1].annotate(f"{f:.0%}", (f * best, 1), xycoords=("data", "axes fraction"), ha="center",
                         va="bottom", fontsize=7, color="grey")
    axes[1].set_xlim(zoom * best, 1.005 * best)
    truth = "test queries' judgements" if metric == "ndcg@10" else "exact search's top 10 as truth"
    for ax, what in zip(axes, ("whole sweep", f"top: >= {zoom:.0%} of the best (targets dotted)")):
        ax.set_yscale("log")
        ax.set_xlabel(f"{NAMES[metric]} ({truth}); {what}", fontsize=9)
        ax.grid(alpha=0.3, which="both")


def _fmt(table: pd.DataFrame, cols, digits: int = 2) -> pd.DataFrame:
    return table.assign(**{c: table[c].map(lambda v: "-" if not np.isfinite(v) else f"{v:.{digits}f}")
                           for c in cols})


def ratios_shown(table: pd.DataFrame, cols: list[str]) -> pd.DataFrame:
    """``table``'s ``cols`` as printed: ratios to two decimals, the target to three, and after
    qps_ratio its range over the rounds (qps_ratio_rounds) where the table has one."""
    shown = _fmt(_fmt(table, [c for c in cols if c.endswith("_ratio")]), ("target",), 3)
    if SPREAD[0] in table:
        low, high = (_fmt(table, SPREAD)[c] for c in SPREAD)
        shown["qps_ratio_rounds"] = low + "-" + high
        cols = [*cols[:cols.index("qps_ratio") + 1], "qps_ratio_rounds", *cols[cols.index("qps_ratio") + 1:]]
    return shown[cols]


def ratio_markdown(table: pd.DataFrame) -> str:
    """The ratio table at equal quality on one metric, one row per (tree system, peer, target)."""
    cols = ["ehi", "peer", "target_share", "target", "qps_ratio", "p50_ratio", "p99_ratio"]
    return ratios_shown(table, cols).to_markdown(index=False)


def fraction_markdown(table: pd.DataFrame) -> str:
    """Single-query latency of the tree against IVF-Flat at equal fraction scored."""
    shown = _fmt(_fmt(table, ("ehi_p99_ms", "peer_p99_ms"), 3), ("p99_ratio", "p50_ratio", "qps_ratio"))
    shown["frac_scored"] = shown.frac_scored.map(lambda v: f"{v:.4f}")
    return shown[["ehi", "peer", "budget_value", "frac_scored", "ehi_p99_ms", "peer_p99_ms", "p99_ratio", "p50_ratio",
                  "qps_ratio"]].to_markdown(index=False)


def _plainly(table: pd.DataFrame, tree: str, peer: str, metric: str = "ndcg@10") -> str:
    """Which of the two serves more queries a second at equal ``metric``, said in words."""
    rows = table[(table.ehi == tree) & (table.peer == peer) & (table.metric == metric)]
    ratios = ", ".join(f"{r.qps_ratio:.2f}x at {r.target_share:.0%} ({r.target:.3f})" for _, r in rows.iterrows())
    verdict = ("faster at every target" if (rows.qps_ratio > 1).all() else
               "slower at every target" if (rows.qps_ratio < 1).all() else "faster at some targets, slower at others")
    return f"{tree} / {peer} QPS at equal {NAMES[metric]} (share of the shared best): {ratios}; {tree} is {verdict}"


def write_outputs(curves: pd.DataFrame, out_dir: Path, title: str, note: str = "",
                  cost: pd.DataFrame | None = None) -> None:
    """trained_curves/_matched/_fraction(/_costs).parquet, trained_pareto.png and trained.md in
    ``out_dir``. Ratios are per thread count; the figure and the latency table use the fewest."""
    every = curves
    table = pd.concat([matched(c, metrics=METRICS).assign(threads=t)
                       for t, c in every.groupby("threads")], ignore_index=True)
    curves = every[every.threads == every.threads.min()]
    peers = [s for s in curves.system.unique() if not is_tree(s)]
    ivfs = [p for p in peers if method(p) == "faiss-ivf" or SAME_LISTS.fullmatch(method(p))]
    hnsw = next((p for p in peers if method(p) == "faiss-hnsw"), None)
    trees = [s for s in curves.system.unique() if is_tree(s) and method(s) not in COMPRESSED]  # flat leaves
    frac = pd.concat([at_fraction(curves, t, ivf) for t in trees for ivf in ivfs] or [pd.DataFrame()],
                     ignore_index=True)
    with staged_files(out_dir) as staged:  # every file of the report replaced together, or none
        every.to_parquet(staged / "trained_curves.parquet", index=False)
        if cost is not None:
            cost.to_parquet(staged / "trained_costs.parquet", index=False)
        table.to_parquet(staged / "trained_matched.parquet", index=False)
        frac.to_parquet(staged / "trained_fraction.parquet", index=False)
        pareto_figure(curves, staged / "trained_pareto.png", title)
        together = _together(curves) if spread_columns(curves) else None  # reports timed before: as they were
        (staged / "trained.md").write_text(_report_text(table, trees, hnsw, frac, title, note, cost, together))


def _together(curves: pd.DataFrame) -> str | None:
    """The trees-together section on the figure's metrics, None with fewer than two trees."""
    from benchmarks.trained_together import together_markdown, trees_together  # it reads this module

    table = pd.concat([trees_together(curves, m) for m in FIGURE_METRICS if m in curves], ignore_index=True)
    return together_markdown(table) if len(table) else None


def _report_text(table, trees, hnsw, frac, title: str, note: str, cost, together: str | None = None) -> str:
    text = [f"# {title}\n", *([note + "\n"] if note else []),
            "## EHI / peer at equal nDCG@10, Recall@10 and k-NN recall@10 (the fastest measured point of each "
            "reaching the target)\n", QUALITY_NOTE + "\n"]
    if SPREAD[0] in table:
        text += [ROUNDS_NOTE + "\n"]
    for t, part in table.groupby("threads"):
        text += [f"### Batched search with {t} thread(s)\n"]
        for metric, rows in part.groupby("metric", sort=False):
            text += [f"#### At equal {NAMES[metric]}\n", ratio_markdown(rows) + "\n"]
    least = table[table.threads == table.threads.min()]
    text += ["\n".join(f"- {_plainly(least, t, hnsw, m)}." for m in FIGURE_METRICS if m in set(least.metric)
                       for t in trees if hnsw) + "\n"]
    if together:
        text += [together]
    if cost is not None:
        text += ["## What each costs (build: the index over trained vectors or leaves; train: the pipeline's "
                 "train_ehi job; index MiB: resident growth across the build)\n", cost_markdown(cost) + "\n"]
    if not frac.empty:
        text += ["## Single-query latency at equal fraction scored (the tree's measured budgets; the peer log-linear in the fraction between its two measured points)\n",
                 fraction_markdown(frac) + "\n"]
    return "\n".join(text)
