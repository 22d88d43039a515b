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
    """Rule tables' declared inputs: the report reads these files, found nowhere else."""

    significance: Path  # results/<dataset>/significance.parquet: its folder is the dataset's results
    summaries: tuple[Path, ...] = ()  # <variant>/summary.parquet, seed replicas' included
    train_logs: tuple[Path, ...] = ()  # <variant>/train_log/<model>.parquet
    leaves: tuple[Path, ...] = ()  # <variant>/leaves.parquet of each variant that searches its tree
    ablation_significance: Path | None = None  # ablation_significance.parquet (rule ablation_significance)

    @property
    def results(self) -> Path:
        return Path(self.significance).parent

    def by_variant(self, paths, depth: int) -> dict[str, list[Path]]:
        """{variant: its paths}, the variant being the folder ``depth`` levels above a file."""
        out: dict[str, list[Path]] = {}
        for path in map(Path, paths):
            out.setdefault(path.parents[depth - 1].relative_to(self.results).as_posix(), []).append(path)
        return out

    @classmethod
    def of_results(cls, results: str | os.PathLike, variants) -> "ReportInputs":
        """The inputs rule tables would declare over a results folder, for a report outside the workflow
        (``variants``: seed replicas included where the report reads them)."""
        results = Path(results)
        there = lambda paths: tuple(p for p in paths if p.exists())  # noqa: E731
        ablation = results / "ablation_significance.parquet"
        return cls(results / "significance.parquet", there(results / v / "summary.parquet" for v in variants),
                   tuple(p for v in variants for p in sorted((results / v / "train_log").glob("*.parquet"))),
                   there(results / v / "leaves.parquet" for v in variants), ablation if ablation.exists() else None)


@dataclass(frozen=True)
class ReportSettings:
    """Rule tables' params. ``variant_systems``: evaluation.variant_systems ({name:
    "<variant>/<system>"}), shown in the main KMR table and figures beside the main setting's
    systems. ``seed_replicas`` ({variant: its seed replicas}, ehi.evaluate.seeds; empty for one
    seed): the KMR table shows mean ± sd over seeds, with the long table (mean, sd, min, max) and a
    figure of its own. ``ablation_systems``: the searches the ablation tables compare."""

    dataset: str
    variants: tuple[str, ...]
    ablations: dict
    metrics: tuple[str, ...]
    targets: tuple[float, ...]
    ablation_systems: tuple[str, ...]
    alpha: float = 0.05  # the ablation tests' (rule ablation_significance), in their caption
    variant_systems: dict = field(default_factory=dict)
    seed_replicas: dict = field(default_factory=dict)
    main_seed: int = 0
    systems: tuple[str, ...] | None = None  # search.systems: rows of any other system are left out, with a note
    budget_axis: str = "documents"  # evaluation.budget_axis: what a budget counts (ehi.core.work.on_budget_axis)
    noise_notes: bool = False  # evaluation.noise_notes (ehi.report.noise)

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
    """Every file the report reads, each read and checked once. Summaries ({its folder under the
    results: frame}, seed replicas' included) are checked (:func:`check_summary_values`) and on the
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

        summaries = {v: summary(paths[0]) for v, paths in inputs.by_variant(inputs.summaries, 1).items()}
        significance = check_significance_values(read_table(inputs.significance), inputs.significance, s.dataset)
        leaves = {v: read_table(paths[0], "leaves") for v, paths in inputs.by_variant(inputs.leaves, 1).items()}
        logs = {v: {p.stem: read_table(p) for p in sorted(paths)}
                for v, paths in inputs.by_variant(inputs.train_logs, 2).items()}
        timings = {v: [read_table(p, "timings") for p in sorted((inputs.results / v / "timings").glob("*.parquet"))]
                   for v in s.variants}
        path = inputs.ablation_significance
        ablation = check_significance_values(read_table(path, "significance"), path, s.dataset) \
            if path is not None and s.ablations else pd.DataFrame()
        return cls(inputs.results, summaries, significance, leaves, logs, timings, ablation)
