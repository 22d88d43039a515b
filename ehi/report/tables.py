"""Every table and figure of one dataset, each a function of :class:`ehi.report.report_data.ReportData`:
rule ``tables``' declared inputs under ``results/<dataset>/``, each read and checked once.
Which systems the ablation tables compare is the config's ``ablation_systems``, and which of those
are read at a budget the registry says (:func:`ehi.search.registry.budgeted`), never their names.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np
import pandas as pd

from ehi.report import figures as draw
from ehi.report.kmr_figures import plot_kmr
from ehi.report.significance_table import render_significance
from ehi.model.tree_stats import leaf_health, leaf_size_stats
from ehi.evaluate.metrics import kmr_table
from ehi.core.io import atomic_dir, staged_files
from ehi.core.work import BUDGET_AXES
from ehi.evaluate.ablation_tests import ABLATION_BUDGET, ablation_searches
from ehi.evaluate.variant_systems import parse as parse_variant_systems, with_variant_systems
from ehi.report.seed_tables import kmr_over_seeds_wide, plot_kmr_over_seeds, seeded_summary
from ehi.report.noise import near_chance_note
from ehi.report.styles import variant_names
from ehi.report.summary_checks import listed_systems_only
from ehi.report.report_data import ReportData, ReportInputs, ReportSettings
from ehi.report.report_files import check_no_figure_dropped
from ehi.report.train_log import train_log_table

log = logging.getLogger(__name__)

def _pct(target: float) -> str:
    return f"{100 * target:g}%"


def kmr_wide(summary: pd.DataFrame, metrics, targets) -> pd.DataFrame:
    """system x target table of each metric (the paper's main table), best-first by the last metric."""
    frames = []
    for metric in metrics:
        long = kmr_table(summary, targets, metric)
        wide = long.pivot_table(index="system", columns="target", values="value", dropna=False)
        wide.columns = [_pct(t) for t in wide.columns]
        frames.append(wide.reset_index().assign(metric=metric))
    table = pd.concat(frames, ignore_index=True)
    return table[["metric", "system", *[_pct(t) for t in targets]]]


def leaf_balance(leaves: dict[str, pd.DataFrame]) -> pd.DataFrame:
    rows = []
    for variant, df in leaves.items():
        sizes = df["size"].to_numpy()
        s = leaf_size_stats(sizes)
        rows.append({"variant": variant, "leaves": len(sizes), "empty": s["leaf_empty"], "min": s["leaf_min"],
                     "median": s["leaf_median"], "max": s["leaf_max"], "max/mean": s["leaf_max_over_mean"],
                     "gini": s["leaf_gini"], "status": leaf_health(sizes)[0]})
    return pd.DataFrame(rows)


_HEALTH_WORDS = {"collapsed": "has collapsed", "unbalanced": "is unbalanced", "empty leaves": "has empty leaves"}


def tree_warnings(leaves: dict[str, pd.DataFrame], names: dict[str, str] | None = None) -> dict[str, str]:
    """{variant: a sentence} for each variant whose tree is collapsed, unbalanced or has empty
    leaves, the variant called by its name in ``names`` (:func:`ehi.report.styles.variant_names`)."""
    out = {}
    for variant, df in leaves.items():
        status, why = leaf_health(df["size"].to_numpy())
        if status != "ok":
            name = (names or {}).get(variant, "main setting" if variant == "main" else variant)
            out[variant] = f"EHI's tree ({name}) {_HEALTH_WORDS[status]}: {why}."
    return out


def ablation_table(summaries: dict[str, pd.DataFrame], ablations: dict[str, list[str]], metrics,
                   systems) -> pd.DataFrame:
    """Each ablation system (config ablation_systems: a budgeted search at ABLATION_BUDGET, an
    exhaustive one at its full value), per ablation variant (main included)."""
    rows = []
    for name, variants in ablations.items():
        for variant in ["main", *variants]:
            if variant not in summaries:
                continue
            summary = summaries[variant]
            row = {"ablation": name, "variant": variant}
            for metric in metrics:
                for system, label, target in ablation_searches(systems):
                    if target < 1.0:
                        point = kmr_table(summary[summary.system == system], [target], metric)
                        row[f"{label} {metric} @{_pct(target)}"] = point.value.iloc[0] if len(point) else np.nan
                    else:
                        full = summary[(summary.system == system) & (summary.metric == metric)]
                        row[f"{label} {metric}"] = full.value.max() if len(full) else np.nan
            rows.append(row)
    return pd.DataFrame(rows)


def ablation_significance_table(sig: pd.DataFrame, systems) -> pd.DataFrame:
    """One row per (ablation, variant, search, metric): main vs variant and both Holm-adjusted p-values."""
    if sig.empty:
        return pd.DataFrame(columns=["ablation", "variant", "search", "metric", "main", "variant value", "delta"])
    labels = {s: label if target == 1.0 else f"{label} @{_pct(target)}" for s, label, target in ablation_searches(systems)}
    sig = sig.assign(search=sig.system_a.map(labels))
    keys = ["ablation", "variant", "search", "metric"]
    wide = sig.pivot_table(index=keys, columns="test", values="p_adjusted", sort=False).reset_index()
    wide.columns = [f"p_adj {c}" if c in ("t-test", "randomization") else c for c in wide.columns]
    means = sig.drop_duplicates(keys)[[*keys, "mean_b", "mean_a", "delta"]]
    table = means.rename(columns={"mean_b": "main", "mean_a": "variant value"}).merge(wide, on=keys)
    flags = sig.loc[sig.test == "randomization", [*keys, "significant"]]  # at the alpha the tests ran with
    table = table.merge(flags, on=keys)
    table["significant"] = np.where(table.significant, "yes", "no")
    return table


def timings_table(data: ReportData, variants) -> pd.DataFrame:
    """Wall-clock seconds: each training log's and the timings a run left under
    ``results/<variant>/timings/`` (not committed, so no rule input)."""
    rows = []
    for variant in variants:
        for model, log in data.train_logs.get(variant, {}).items():
            if "seconds" not in log:  # results' logs leave wall clock out (it is in logs/.../benchmarks/)
                continue
            rows.append({"variant": variant, "stage": "train", "system": model,
                         "seconds": float(log.seconds.sum()), "items": int(len(log)), "unit": "epochs"})
        for timings in data.timings.get(variant, []):
            for t in timings.itertuples():
                rows.append({"variant": variant, "stage": t.stage, "system": t.system, "seconds": t.seconds,
                             "items": t.items, "unit": "texts"})
    return pd.DataFrame(rows)


def build_report(inputs: ReportInputs, settings: ReportSettings, tables_dir: str | os.PathLike,
                 figures_dir: str | os.PathLike) -> None:
    """Every table and figure of one dataset from ``inputs`` (rule tables' inputs) as ``settings``
    (its params) ask.

    Everything renders into temporary folders first and moves into place only once the whole set
    did: a result that cannot be read leaves the previous tables and figures as they were."""
    data = ReportData.load(inputs, settings)  # every file read and checked before anything renders
    with atomic_dir(figures_dir) as figures, staged_files(tables_dir) as tables:
        _render(data, settings, tables, figures)
        check_no_figure_dropped(figures_dir, figures)  # nor the tables beside them, rendered without those rows


def _render(data: ReportData, s: ReportSettings, tables: Path, figures: Path) -> None:
    dataset, metrics, targets = s.dataset, s.metrics, s.targets
    summaries = {v: data.summaries[v] for v in s.variants if v in data.summaries}
    specs = parse_variant_systems(s.variant_systems)
    main = with_variant_systems(summaries["main"], [(x, summaries[x.variant]) for x in specs if x.variant in summaries])
    listed = None if s.systems is None else [*s.systems, *(x.name for x in specs)]
    main, unlisted = listed_systems_only(main, data.main_summary_path, main.system if listed is None else listed)
    leaves = data.leaves
    names = variant_names(s.ablation_rows)  # the figures' names of the variants; their paths in a footnote
    warnings = tree_warnings(leaves, names)  # a degenerate tree is flagged wherever its numbers appear
    for line in [*warnings.values(), unlisted]:
        if line:
            log.warning(line)
    axis = BUDGET_AXES[s.budget_axis]
    caption = f"{dataset}: metric at the largest budget not above each fraction of {axis}."
    near_chance = near_chance_note(main) if s.noise_notes else None
    if near_chance:
        log.warning(near_chance.removeprefix("Warning: "))
    seeded = None
    if s.seed_replicas:
        seeded = seeded_summary(data.summaries, s.seed_replicas, specs)
        wide, long = kmr_over_seeds_wide(listed_systems_only(seeded, "", seeded.system if listed is None else listed)[0],
                                         metrics, targets, one_seed_spread=not s.noise_notes)
        caption += " Mean ± sd over training seeds (each seed at its own largest point not above the budget)."
        draw.render_table(long, tables / f"{dataset}_kmr_seeds", caption=f"{dataset}: KMR over training seeds")
        for metric in metrics:
            plot_kmr_over_seeds(long, metric, figures / f"kmr_seeds_{metric.replace('@', '_at_')}.png",
                                title=f"{dataset}: {metric} over training seeds", axis=axis)
    else:
        wide = kmr_wide(main, metrics, targets)
    draw.render_table(wide, tables / f"{dataset}_kmr", caption=caption,
                      note=" ".join(filter(None, [warnings.get("main"), unlisted, near_chance])))
    for metric in metrics:
        plot_kmr(main, metric, figures / f"kmr_{metric.replace('@', '_at_')}.png", title=f"{dataset}: {metric}",
                 axis=axis, seeded=seeded)
    sig, unlisted_sig = data.significance, ""
    if listed is not None:
        sig, unlisted_sig = listed_systems_only(sig, f"{data.results / 'significance.parquet'}", listed, ("system_a", "system_b"))
        if unlisted_sig:
            log.warning(unlisted_sig)
    render_significance(sig, tables / f"{dataset}_significance", caption=f"{dataset}: paired significance tests, Holm-adjusted",
                        systems=main.system.unique(), why_empty=unlisted_sig.rstrip("."))
    draw.render_table(leaf_balance(leaves), tables / f"{dataset}_leaf_balance",
                       caption=f"{dataset}: documents per leaf.", note=" ".join(warnings.values()))
    draw.plot_leaf_sizes({v: df["size"].to_numpy() for v, df in leaves.items()}, figures / "leaf_sizes.png",
                         title=f"{dataset}: documents per leaf", names=names)
    _render_ablations(data, s, summaries, names, tables, figures)
    draw.render_table(timings_table(data, s.variants), tables / f"{dataset}_timings",
                      caption=f"{dataset}: wall-clock seconds per stage", floatfmt=".1f",
                      empty=f"No timings in these results: a pipeline run writes them under results/{dataset}/"
                            "<variant>/timings/, which are not committed (they change with the machine's load).")
    main_logs = dict(sorted(data.train_logs.get("main", {}).items()))
    if main_logs:  # results copied without their training logs still render everything else
        draw.plot_training(main_logs, figures / "training.png", title=f"{dataset}: training")
        draw.render_table(train_log_table(main_logs), tables / f"{dataset}_train_log",
                          caption=f"{dataset}: every training epoch on dev, its leaf balance and the epoch kept")


def _render_ablations(data: ReportData, s: ReportSettings, summaries, names, tables: Path, figures: Path) -> None:
    """The ablation table, its figures and its significance table over the config's ablation systems."""
    dataset, ablations, systems = s.dataset, s.ablations, tuple(s.ablation_systems)
    abl = ablation_table(summaries, ablations, s.metrics, systems)  # every metric; the figure shows the first
    draw.render_table(abl, tables / f"{dataset}_ablations", caption=f"{dataset}: ablations of EHI",
                      empty="This config has no ablations.")
    sig = data.ablation_significance
    for name in ablations:  # each variant with its interval against the main setting
        rows = abl[abl.ablation == name]
        draw.plot_ablation(rows, list(rows.columns[2:4]), figures / f"ablation_{name}.png",
                           title=f"{dataset}: ablation {name}", sig=sig[sig.ablation == name] if len(sig) else None,
                           names=names)
    draw.render_table(ablation_significance_table(sig, systems), tables / f"{dataset}_ablation_significance",
                       caption=f"{dataset}: each ablation variant against the main setting, paired over queries "
                               f"(EHI's tree at <= {_pct(ABLATION_BUDGET)} of {BUDGET_AXES[s.budget_axis]}, and exact search); "
                               "p-values Holm-adjusted over one ablation's variants and searches per metric and test; "
                               f"'significant': randomization test, adjusted p < {s.alpha}",
                      empty=_no_ablation_tests(ablations, abl))


def _no_ablation_tests(ablations: dict, table: pd.DataFrame) -> str:
    """What an ablation significance table without tests says: the sentence that is true of the
    ablation variants with results (``table``: the ablation table's rows, main's included)."""
    if not ablations:
        return "This config has no ablations."
    ran = sorted(set(table.variant) - {"main"}) if len(table) else []
    if not ran:
        return "No ablation variant has results yet."
    return (f"No test of the ablation variants with results ({', '.join(ran)}) against the main setting: their tests "
            "(ablation_significance.parquet) hold none of them, or could not pair them with the main setting at "
            "the ablation budget; make them again (snakemake --forcerun ablation_significance).")
