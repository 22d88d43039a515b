"""``ehi compare`` held to a committed study: its cells beside the study's seed means (rule compare_check).

The vector road (``ehi compare DIR``) runs the decisive recipe of a committed config on a folder of
vectors. Where that folder is a committed study's own (webster's MiniLM vectors and
config/webster_joint.yaml), a run of it with one seed is a check a user can repeat: each of its KMR
cells should land within the study's three-seed mean ± max(3 sd, :data:`FLOOR`). Both sides are read
on one budget axis, work (documents scored plus routing), which is the one ``ehi compare`` reports.

The compare side is the run's KMR table as it wrote it (``results/tables/<name>_kmr.csv`` under its
``--out``: one seed, numbers in full), copied beside the command that made it; the study side is
computed here from the study's cached summaries, every seed, as its own KMR table computes them.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from ehi.core.work import BUDGET_AXES, on_budget_axis
from ehi.evaluate.seeds import kmr_over_seeds
from ehi.evaluate.variant_systems import parse as parse_variant_systems
from ehi.report.seed_tables import seeded_summary

FLOOR = 0.005  # the tolerance where three seeds agree closer than a third decimal can tell
AXIS = "work"


def study_cells(summaries: dict[str, pd.DataFrame], seed_replicas: dict[str, dict[str, int]], variant_systems: dict,
                systems, metric: str, targets) -> pd.DataFrame:
    """The study's ``metric`` of each of ``systems`` at each target on the work axis, over seeds:
    one row per (system, target) with value (mean), sd and n_seeds (:func:`kmr_over_seeds`)."""
    seeded = seeded_summary(summaries, seed_replicas, parse_variant_systems(variant_systems))
    seeded = on_budget_axis(seeded[seeded.system.isin(list(systems))], AXIS, "the study's summaries")
    return kmr_over_seeds(seeded, targets, metric)[["system", "target", "value", "sd", "n_seeds"]]


def run_cells(kmr_csv: str | os.PathLike, systems, metric: str, targets) -> pd.DataFrame:
    """The run's ``metric`` of each of ``systems`` at each target, read from its KMR table (one seed:
    plain numbers, '–' where it had no point that cheap); a system the run lacks is refused."""
    table = pd.read_csv(kmr_csv, dtype=str)
    rows = table[table.metric == metric].set_index("system")
    missing = [s for s in systems if s not in rows.index]
    if missing:
        raise ValueError(f"{kmr_csv}: no {metric} row of {', '.join(missing)} in the run's KMR table")
    cells = []
    for system in systems:
        for target in targets:
            text = rows.at[system, f"{100 * target:g}%"]
            value = np.nan if text in ("–", "") or pd.isna(text) else float(text.split(" ± ")[0])
            cells.append({"system": system, "target": float(target), "run": value})
    return pd.DataFrame(cells)


def verdict(run: float, mean: float, tolerance: float) -> str:
    """'within', 'outside', or where a side has no point that cheap, which one."""
    if np.isnan(run) and np.isnan(mean):
        return "no point on either"
    if np.isnan(run) or np.isnan(mean):
        return "no point in the run" if np.isnan(run) else "no point in the study"
    return "within" if abs(run - mean) <= tolerance + 1e-12 else "outside"


def side_by_side(run: pd.DataFrame, study: pd.DataFrame) -> pd.DataFrame:
    """One row per (system, budget): the run's cell, the study's mean, sd and seeds, the tolerance
    max(3 sd, FLOOR), the difference and the verdict; in the order of ``run``."""
    both = run.merge(study, on=["system", "target"], how="left")
    tolerance = np.maximum(3 * both.sd.fillna(0.0), FLOOR)
    return pd.DataFrame({
        "system": both.system, "budget": [f"{100 * t:g}%" for t in both.target], "run": both.run,
        "study mean": both.value, "study sd": both.sd, "seeds": both.n_seeds.fillna(0).astype(int),
        "tolerance": tolerance, "run - mean": both.run - both.value,
        "verdict": [verdict(r, m, t) for r, m, t in zip(both.run, both.value, tolerance)],
    })


def summary_line(table: pd.DataFrame) -> str:
    """How many cells landed, in words, with the farthest one outside named."""
    compared = table[table.verdict.isin(["within", "outside"])]
    within = int((compared.verdict == "within").sum())
    line = f"{within} of {len(compared)} cells within the study's mean ± max(3 sd, {FLOOR:g})"
    unread = len(table) - len(compared)
    if unread:
        line += f"; {unread} without a point that cheap on a side (named in the table)"
    outside = compared[compared.verdict == "outside"]
    if len(outside):
        far = outside.loc[(outside["run - mean"].abs() / outside.tolerance).idxmax()]
        line += (f"; the farthest outside: {far.system} at {far.budget}, {far['run - mean']:+.4f} "
                 f"against ±{far.tolerance:.4f}")
    return line + "."


def render_compare_check(table: pd.DataFrame, stem: str | os.PathLike, run_name: str, study: str,
                         metric: str, command: str) -> list[Path]:
    """The side-by-side as Markdown, LaTeX, CSV and HTML, its caption naming both sides and the command."""
    from ehi.report.figures import render_table

    caption = (f"`{command}` (dataset {run_name}, one seed) beside {study}'s seed means: {metric} at the "
               f"largest budget not above each fraction of {BUDGET_AXES[AXIS]}; tolerance max(3 sd, {FLOOR:g}).")
    return render_table(table, stem, caption=caption, note=summary_line(table))


def compare_check(run: str | os.PathLike, summaries: dict[str, str | os.PathLike], seed_replicas: dict,
                  variant_systems: dict, check: dict, study: str, stem: str | os.PathLike) -> list[Path]:
    """Rule compare_check: the run under ``run`` (its kmr.csv and run.json, benchmarks/record_compare.py)
    beside the study's summaries ({variant path: its summary.parquet}); ``check``: the config's
    compare_check (systems, metric, targets)."""
    import json

    from ehi.core.io import read_table

    record = json.loads((Path(run) / "run.json").read_text())
    systems, metric, targets = check["systems"], check["metric"], check["targets"]
    frames = {variant: read_table(path, "summary") for variant, path in summaries.items()}
    table = side_by_side(run_cells(Path(run) / "kmr.csv", systems, metric, targets),
                         study_cells(frames, seed_replicas, variant_systems, systems, metric, targets))
    return render_compare_check(table, stem, record["dataset"], study, metric, record["command"])
