"""What one dataset's report reads: rule ``tables``' declared inputs (:class:`ReportInputs`), its
params (:class:`ReportSettings`), and every one of those files loaded and checked once
(:class:`ReportData`), so each table is a function of frames already read, never of a path.

The timings a run leaves under ``results/<variant>/timings/`` are read here too: never committed
(they change with the machine's load), so no rule input, and a report without them says so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from pathlib import Path

import pandas as pd

from ehi.core.io import read_table
from ehi.core.work import on_budget_axis
from ehi.report.summary_checks import check_significance_values, check_summary_values


@dataclass(frozen=True)
class ReportInputs:
    """Rule tables' declared inputs, each beside the variant it is of: the report reads these files,
    found nowhere else."""

    significance: Path  # results/<dataset>/significance.parquet: its folder is the dataset's results
    summaries: dict[str, Path] = field(default_factory=dict)  # {variant: its summary}, seed replicas' included
    train_logs: dict[str, tuple[Path, ...]] = field(default_factory=dict)  # {variant: its train_log/<model>.parquet}
    leaves: dict[str, Path] = field(default_factory=dict)  # {variant: its leaves} of each that searches its tree
    ablation_significance: Path | None = None  # ablation_significance.parquet (rule ablation_significance)

    @property
    def results(self) -> Path:
        return Path(self.significance).parent

    @classmethod
    def of_rule(cls, inputs, params) -> "ReportInputs":
        """From rule tables' ``input`` and ``params``: each file beside the variant the rule names it for."""
        def named(variants, paths) -> dict[str, list[Path]]:
            out: dict[str, list[Path]] = {}
            for variant, path in zip(variants, paths, strict=True):
                out.setdefault(variant, []).append(Path(path))
            return out

        ablation = inputs.ablation_significance
        return cls(Path(inputs.significance),
                   {v: ps[0] for v, ps in named(params.summary_variants, inputs.summaries).items()},
                   {v: tuple(ps) for v, ps in named(params.train_log_variants, inputs.train_logs).items()},
                   {v: ps[0] for v, ps in named(params.leaves_variants, inputs.leaves).items()},
                   Path(ablation[0]) if ablation else None)

    @classmethod
    def of_results(cls, results: str | os.PathLike, variants) -> "ReportInputs":
        """The inputs rule tables would declare over a results folder, for a report outside the workflow
        (``variants``: seed replicas included where the report reads them)."""
        results = Path(results)
        there = lambda name: {v: results / v / name for v in variants if (results / v / name).exists()}  # noqa: E731
        logs = {v: tuple(sorted((results / v / "train_log").glob("*.parquet"))) for v in variants}
        ablation = results / "ablation_significance.parquet"
        return cls(results / "significance.parquet", there("summary.parquet"), {v: ps for v, ps in logs.items() if ps},
                   there("leaves.parquet"), ablation if ablation.exists() else None)


@dataclass(frozen=True)
class ReportSettings:
    """Rule tables' params. ``variant_systems``: evaluation.variant_systems ({name:
    "<variant>/<system>"}), shown in the main KMR table and figures beside the main setting's
    systems. ``seed_replicas`` ({variant: {its seed replicas: their seeds}}, ehi.evaluate.seeds; empty for one
    seed): the KMR table shows mean ± sd over seeds, with the long table (mean, sd, min, max) and a
    figure of its own. ``ablation_systems``: the searches the ablation tables compare.
    ``ablation_rows``: each ablation's rows' settings (ehi.core.config_schema.ablation_rows), which
    the figures and notes name its variants by (ehi.report.styles.variant_names)."""

    dataset: str
    variants: tuple[str, ...]
    ablations: dict
    metrics: tuple[str, ...]
    targets: tuple[float, ...]
    ablation_systems: tuple[str, ...]
    alpha: float = 0.05  # the ablation tests' (rule ablation_significance), in their caption
    variant_systems: dict = field(default_factory=dict)
    seed_replicas: dict = field(default_factory=dict)
    systems: tuple[str, ...] | None = None  # search.systems: rows of any other system are left out, with a note
    budget_axis: str = "documents"  # evaluation.budget_axis: what a budget counts (ehi.core.work.on_budget_axis)
    noise_notes: bool = False  # evaluation.noise_notes (ehi.report.noise)
    ablation_rows: dict = field(default_factory=dict)

    @classmethod
    def from_params(cls, params) -> "ReportSettings":
        """From rule tables' params, by name: a key the rule leaves out (evaluation's report keys are
        params only where a config sets them) keeps its default; a sequence becomes a tuple."""
        given = {f.name: getattr(params, f.name) for f in fields(cls) if hasattr(params, f.name)}
        for name in ("variants", "metrics", "targets", "ablation_systems", "systems"):
            if given.get(name) is not None:
                given[name] = tuple(given[name])
        return cls(**{**given, "variant_systems": given.get("variant_systems") or {}})


@dataclass(frozen=True)
class ReportData:
    """Every file the report reads, each read and checked once. Summaries ({variant: frame}, seed
    replicas' included) are checked (:func:`check_summary_values`) and on the
    budget axis; the significance table is checked; train logs are {variant: {model: log}} in the
    order of their paths."""

    results: Path
    summaries: dict[str, pd.DataFrame]
    significance: pd.DataFrame
    leaves: dict[str, pd.DataFrame]
    train_logs: dict[str, dict[str, pd.DataFrame]]
    timings: dict[str, list[pd.DataFrame]]
    ablation_significance: pd.DataFrame  # empty without ablations or their tests

    @property
    def main_summary_path(self) -> str:
        return str(self.results / "main" / "summary.parquet")

    @classmethod
    def load(cls, inputs: ReportInputs, s: ReportSettings) -> "ReportData":
        def summary(path: Path) -> pd.DataFrame:
            checked = check_summary_values(read_table(path, "summary"), path, s.dataset)
            return on_budget_axis(checked, s.budget_axis, str(path))

        summaries = {v: summary(path) for v, path in inputs.summaries.items()}
        significance = check_significance_values(read_table(inputs.significance), inputs.significance, s.dataset)
        leaves = {v: read_table(path, "leaves") for v, path in inputs.leaves.items()}
        logs = {v: {p.stem: read_table(p) for p in sorted(paths)} for v, paths in inputs.train_logs.items()}
        timings = {v: [read_table(p, "timings") for p in sorted((inputs.results / v / "timings").glob("*.parquet"))]
                   for v in s.variants}
        path = inputs.ablation_significance
        ablation = check_significance_values(read_table(path, "significance"), path, s.dataset) \
            if path is not None and s.ablations else pd.DataFrame()
        return cls(inputs.results, summaries, significance, leaves, logs, timings, ablation)
