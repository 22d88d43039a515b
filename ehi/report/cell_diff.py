"""Where two versions of one result file differ: value by value, under the golden's tolerances.

A Parquet table is compared frame to frame, column by column, by the golden's own rule for its
kind (:func:`ehi.report.golden_tolerances.compare_table`: exactly, or run scores and training-log
floats to their stated tolerance). A text table (Markdown, LaTeX, CSV, JSON) is compared line by
line: where a line's text around its numbers is unchanged, its numbers are paired cell by cell and
held to the same rule; where the text moved (a row added, a label changed) the file is beyond
tolerance. Figures and other files are compared by their bytes only.
"""

from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ehi.report.golden_tolerances import compare_table

NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
CELL_SEPARATORS = {".md": "|", ".tex": "&", ".csv": ",", ".json": None, ".txt": None, ".yaml": None}
VALUE_MARKS = re.compile(r"[\s±%–\-+x×(),.*$\\]")  # what a value cell holds besides its numbers
ROW_KEYS = 4  # columns of a row's key shown to name it


@dataclass(frozen=True)
class CellDifference:
    """The largest difference of one file: its size, the row and column it sits in, both values."""

    size: float
    row: str
    column: str
    committed: str
    rerun: str


@dataclass(frozen=True)
class FileComparison:
    """One committed result against its rerun: ``identical`` (bytes), ``within`` or ``beyond`` the
    golden's tolerances, the largest cell difference (None where no number could be paired) and
    what moved, in words."""

    path: str
    verdict: str
    largest: CellDifference | None = None
    notes: tuple[str, ...] = ()


def compare_versions(path: str, committed: bytes, rerun: bytes | None) -> FileComparison:
    """``path``'s committed bytes against the rerun's (None: the rerun removed the file)."""
    if rerun is None:
        return FileComparison(path, "beyond", notes=("the rerun removed it",))
    if committed == rerun:
        return FileComparison(path, "identical")
    suffix = Path(path).suffix
    try:
        if suffix == ".parquet":
            return _compare_frames(path, _frame(committed), _frame(rerun))
        if suffix in CELL_SEPARATORS:
            return _compare_text(path, committed.decode(), rerun.decode(), CELL_SEPARATORS[suffix])
    except (pa.ArrowException, OSError, ValueError, TypeError) as err:  # UnicodeDecodeError included
        return FileComparison(path, "beyond", notes=(f"not readable as a table ({type(err).__name__}): compared by bytes",))
    return FileComparison(path, "beyond", notes=("not a table: compared by bytes",))


def _frame(raw: bytes) -> pd.DataFrame:
    return pq.read_table(io.BytesIO(raw)).to_pandas()


def _shown(value) -> str:
    return repr(float(value)) if isinstance(value, (float, np.floating)) else str(value)


def _row_name(frame: pd.DataFrame, i: int) -> str:
    """A row by its key: its values in the first non-float columns that vary over the table (epoch
    and step; system, budget and metric)."""
    keys = [c for c in frame.columns if frame[c].dtype.kind != "f" and frame[c].astype(str).nunique() > 1][:ROW_KEYS]
    return ", ".join(f"{c}={frame[c].iloc[i]}" for c in keys) if keys else f"row {i}"


def _largest_cell(committed: pd.DataFrame, rerun: pd.DataFrame) -> CellDifference | None:
    """The float cell that moved most (a value that became NaN, or stopped being one, counts as
    infinite); None where the frames' shapes differ or no float moved."""
    if list(committed.columns) != list(rerun.columns) or len(committed) != len(rerun):
        return None
    committed, rerun = committed.reset_index(drop=True), rerun.reset_index(drop=True)
    largest = None
    for column in [c for c in committed.columns if committed[c].dtype.kind == "f" and rerun[c].dtype.kind in "fiu"]:
        a, b = committed[column].to_numpy(np.float64), rerun[column].to_numpy(np.float64)
        gap = np.where(np.isnan(a) & np.isnan(b), 0.0, np.abs(a - b))
        gap = np.where(np.isnan(gap), np.inf, gap)
        i = int(np.argmax(gap)) if len(gap) else 0
        if len(gap) and gap[i] > 0 and (largest is None or gap[i] > largest.size):
            largest = CellDifference(float(gap[i]), _row_name(committed, i), str(column), _shown(a[i]), _shown(b[i]))
    return largest


def _compare_frames(path: str, committed: pd.DataFrame, rerun: pd.DataFrame) -> FileComparison:
    problems, largest = compare_table(path, committed, rerun), _largest_cell(committed, rerun)
    notes = [problem.removeprefix(f"{path}: ") for problem in problems]
    notes = notes or ([] if largest else ["the same values; only its metadata (provenance) or types differ"])
    return FileComparison(path, "beyond" if problems else "within", largest, tuple(notes))


def _cells(line: str, separator: str | None) -> list[str]:
    if separator is None:
        return [line]
    return line.strip().strip("|").split(separator) if separator == "|" else line.split(separator)


def _new_table(line: str, separator: str | None) -> bool:
    """Whether ``line`` ends the table before it (its header no longer names the columns below):
    a Markdown line outside a table, a LaTeX tabular's start."""
    return (separator == "|" and not line.lstrip().startswith("|")) or (separator == "&" and "\\begin{tabular" in line)


def _label(cell: str) -> str:
    return cell.strip().strip("*`$\\ ") or "(empty)"


def _row_key(cells: list[str]) -> str:
    """A text table's row by its leading cells of words (metric, system), up to its first value
    (a cell of numbers and signs only: ``3``, ``0.290 ± 0.010``, ``20%``)."""
    keys = []
    for cell in cells:
        if not VALUE_MARKS.sub("", NUMBER.sub("", cell)):
            break
        keys.append(_label(cell))
    return ", ".join(keys[:ROW_KEYS]) or _label(cells[0])


def _compare_text(path: str, committed: str, rerun: str, separator: str | None) -> FileComparison:
    """Numbers paired cell by cell where the text around them is unchanged; the golden's rule for
    the file's kind decides whether the moved ones are within tolerance."""
    old_lines, new_lines = committed.splitlines(), rerun.splitlines()
    if len(old_lines) != len(new_lines):
        return FileComparison(path, "beyond", notes=(f"{len(old_lines)} lines -> {len(new_lines)}: compared by text",))
    header: list[str] | None = None
    pairs: list[tuple[str, str, str, str]] = []  # (row, column, committed, rerun) of every number
    moved_text = []
    for number, (old, new) in enumerate(zip(old_lines, new_lines), start=1):
        old_cells, new_cells = _cells(old, separator), _cells(new, separator)
        if _new_table(old, separator):
            header = None
        if header is None and separator is not None and len(old_cells) > 1:
            header = [_label(c) for c in old_cells]
        if old == new:
            continue
        if len(old_cells) != len(new_cells):
            moved_text.append(f"line {number}")
            continue
        row = f"{_row_key(old_cells)} (line {number})" if separator is not None else f"line {number}"
        for j, (a, b) in enumerate(zip(old_cells, new_cells)):
            if NUMBER.sub("#", a) != NUMBER.sub("#", b):
                moved_text.append(f"line {number} ({row})")
                continue
            column = header[j] if header and j < len(header) else f"cell {j + 1}"
            pairs += [(row, column, x, y) for x, y in zip(NUMBER.findall(a), NUMBER.findall(b)) if x != y]
    notes = [f"text moved at {', '.join(moved_text[:3])}" + (f" and {len(moved_text) - 3} more" if len(moved_text) > 3 else "")] if moved_text else []
    largest, numbers_moved = None, False
    if pairs:
        sizes = [abs(float(x) - float(y)) for _, _, x, y in pairs]
        i = max(range(len(pairs)), key=lambda k: sizes[k] if math.isfinite(sizes[k]) else math.inf)
        largest = CellDifference(sizes[i], *pairs[i])
        numbers_moved = bool(compare_table(path, pd.DataFrame({"value": [float(x) for _, _, x, _ in pairs]}),
                                           pd.DataFrame({"value": [float(y) for _, _, _, y in pairs]})))
        notes.append(f"{len(pairs)} number(s) moved" + ("" if numbers_moved else ", within tolerance"))
    if not pairs and not moved_text:
        notes.append("the same numbers and text; whitespace or line endings differ")
    return FileComparison(path, "beyond" if moved_text or numbers_moved else "within", largest, tuple(notes))
