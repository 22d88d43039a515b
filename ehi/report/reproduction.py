"""A rerun held against the committed results: what reproduced on this CPU, and by how much the rest moved.

The Snakefile's ``onsuccess`` hands this the run's working folder. Every result file git tracks
under ``results/`` is compared with its committed version (git's ``HEAD`` copy): byte-identical,
different in value within the golden's tolerances (:mod:`ehi.report.golden_tolerances`, the rule
for each kind of file; :mod:`ehi.report.cell_diff` applies it), or beyond them; with the largest
difference in a table cell, its table and row, and the CPU and kernel settings of the committed
run and of this one, read from the files' provenance (:mod:`ehi.core.provenance`). The verdict is
written to ``results/reproduction.md`` (not committed) and ends the console in three lines. A
folder outside a git checkout, or with nothing committed under ``results/``, gets one line.
"""

from __future__ import annotations

import io
import json
import subprocess
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq

from ehi.core.kernels import MODES, cpu_model, kernel_settings
from ehi.core.provenance import PROVENANCE_KEY
from ehi.report.cell_diff import FileComparison, compare_versions
from ehi.report.golden_tolerances import LOG_ATOL, LOG_RTOL, SCORE_ATOL

RESULTS = "results"
REPORT = f"{RESULTS}/reproduction.md"
TOLERANCES = (f"run scores to |a - b| <= {SCORE_ATOL:g}, training-log floats to rtol {LOG_RTOL:g} "
              f"(atol {LOG_ATOL:g}), every other value exactly")


class NoComparison(Exception):
    """Why this folder's results cannot be held against committed ones, in one line."""


def _git(root: Path, *args: str) -> bytes:
    try:
        proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as err:
        raise NoComparison(f"git could not be run ({type(err).__name__})") from None
    if proc.returncode != 0:
        said = proc.stderr.decode(errors="replace").strip().splitlines()
        raise NoComparison(said[-1] if said else f"git {args[0]} failed")
    return proc.stdout


def committed_changes(root: Path) -> tuple[list[str], dict[str, str]]:
    """The result files git tracks under ``root``/results, and those the working tree changed
    ({path: git's status letter}), paths relative to ``root``."""
    try:
        _git(root, "rev-parse", "--is-inside-work-tree")
    except NoComparison:
        raise NoComparison(f"{root.resolve()} is not a git checkout") from None
    try:
        _git(root, "rev-parse", "--verify", "-q", "HEAD")
    except NoComparison:
        raise NoComparison("the checkout has no commit yet") from None
    tracked = [p for p in _git(root, "ls-files", "-z", "--", RESULTS).decode().split("\0") if p]
    if not tracked:
        raise NoComparison(f"nothing is committed under {RESULTS}/")
    fields = _git(root, "diff", "HEAD", "--name-status", "--no-renames", "--relative", "-z", "--", RESULTS).decode().split("\0")
    return tracked, {path: status for status, path in zip(fields[::2], fields[1::2]) if path}


def _provenance(source: bytes | Path) -> dict:
    try:
        meta = pq.read_schema(io.BytesIO(source) if isinstance(source, bytes) else source).metadata or {}
        return json.loads(meta.get(PROVENANCE_KEY, b"{}"))
    except (OSError, ValueError):
        return {}


def describe_run(cpu: str | None, kernels: dict | None) -> str:
    """A run's CPU and kernel settings as a person reads them: the mode (ehi.core.kernels) where the
    variables are one mode's, and the variables."""
    if kernels is None:
        return f"{cpu or 'CPU not recorded'}, kernels not recorded"
    pinned = {k: v for k, v in kernels.items() if v is not None}
    mode = next((f"EHI_KERNELS={name} " for name, values in MODES.items() if values == pinned), "kernels ")
    return f"{cpu or 'CPU not recorded'}, {mode}({', '.join(f'{k}={v}' for k, v in pinned.items()) or 'nothing pinned'})"


def runs_of(sources) -> list[str]:
    """The distinct CPU and kernels that Parquet files (bytes or paths) record, the most files first,
    each with how many files record it."""
    counts = Counter(describe_run(p.get("cpu"), p.get("kernels")) for p in map(_provenance, sources))
    return [f"{run} [{n} file{'s' * (n > 1)}]" for run, n in counts.most_common()]


def _first(runs: list[str]) -> str:
    return runs[0] + (f" and {len(runs) - 1} other setting(s) ({REPORT})" if len(runs) > 1 else "")


def compare(root: Path) -> tuple[int, list[FileComparison], list[str], list[str]]:
    """(committed result files, the comparisons of those the rerun changed, the committed run's CPU
    and kernels, this run's)."""
    tracked, changed = committed_changes(root)
    outcomes, committed_parquet, rerun_parquet = [], [], []
    for path, status in sorted(changed.items()):
        committed = _git(root, "show", f"HEAD:./{path}")
        rerun = None if status == "D" else (root / path).read_bytes()
        outcomes.append(compare_versions(path, committed, rerun))
        if path.endswith(".parquet"):
            committed_parquet.append(committed)
            rerun_parquet += [rerun] if rerun else []
    if not committed_parquet:  # no values rewritten: every committed stamp is in the files as they are
        committed_parquet = [root / p for p in tracked if p.endswith(".parquet")]
    this_run = runs_of(rerun_parquet) if rerun_parquet else [describe_run(cpu_model(), kernel_settings())]
    return len(tracked), outcomes, runs_of(committed_parquet) or ["no Parquet result records them"], this_run


def _largest_line(outcomes: list[FileComparison]) -> str:
    shown = [o for o in outcomes if o.largest is not None]
    if not shown:
        return "Largest difference: none in a table cell" + (" (every committed result is byte-identical)." if not outcomes else ".")
    worst = max(shown, key=lambda o: o.largest.size)
    cell = worst.largest
    return (f"Largest difference: {cell.size:.3g} in {worst.path}, row {cell.row}, column {cell.column} "
            f"({cell.committed} committed, {cell.rerun} now).")


def _detail_row(o: FileComparison) -> str:
    cell = o.largest
    where = f"{cell.size:.3g} at row {cell.row}, column {cell.column} ({cell.committed} -> {cell.rerun})" if cell else ""
    cells = [o.path, o.verdict, where, "; ".join(o.notes)]
    return "| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |"


def reproduction_report(root: str | Path = ".") -> list[str]:
    """Compare ``root``'s results with the committed ones, write ``root``/results/reproduction.md and
    return the console's lines (one where no comparison could be made)."""
    root = Path(root)
    try:
        tracked, outcomes, committed_run, rerun = compare(root)
    except NoComparison as why:
        lines = [f"Reproduction: no comparison with committed results could be made: {why}."]
        text = "# Reproduction against the committed results\n\n" + lines[0] + "\n"
    else:
        within = sum(o.verdict == "within" for o in outcomes)
        beyond = sum(o.verdict == "beyond" for o in outcomes)
        lines = [f"Reproduction: of {tracked} committed result files, {tracked - within - beyond} byte-identical, "
                 f"{within} within tolerance, {beyond} beyond tolerance (the golden test's tolerances; {REPORT}).",
                 _largest_line(outcomes),
                 f"CPU and kernels: this run {_first(rerun)}; committed {_first(committed_run)}."]
        text = "\n".join([
            "# Reproduction against the committed results", "",
            f"This run's result files under `{RESULTS}/` held against their committed versions (git's HEAD), "
            f"under the golden test's tolerances (ehi/report/golden_tolerances.py): {TOLERANCES}.", "",
            *[f"- {line}" for line in lines[:2]], "",
            "CPU and kernel settings, as the Parquet files of each run record them (the committed ones: "
            "the committed copies of the files this run changed, or of all when it changed none):", "",
            *[f"- this run: {run}" for run in rerun], *[f"- committed: {run}" for run in committed_run], "",
            *(["| file | verdict | largest difference | what moved |", "|---|---|---|---|"] if outcomes else []),
            *[_detail_row(o) for o in sorted(outcomes, key=lambda o: (o.verdict != "beyond", o.path))], ""])
    report = root / REPORT
    if report.parent.is_dir():
        report.write_text(text)
    return lines
