"""The reproduction report (ehi/report/reproduction.py) read as a user reads it after a rerun.

Each test builds a small git checkout of committed results copied from this repository (a
training log, a summary, a Markdown table), reruns some of them as a job would write them (this
run's provenance, the values changed or not) and reads the report's console lines and file.
"""

import shutil
import subprocess

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ehi.core.io import read_provenance, write_parquet, write_table
from ehi.core.kernels import cpu_model
from ehi.core.provenance import CIRCUMSTANCES
from ehi.report.reproduction import REPORT, reproduction_report

LOG = "results/synthetic/main/train_log/de.parquet"
SUMMARY = "results/synthetic/main/summary.parquet"
TABLE = "results/tables/synthetic_kmr.md"


def git(root, *args):
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.org",
                    "-c", "commit.gpgsign=false", *args], check=True, capture_output=True)


@pytest.fixture
def checkout(tmp_path, repo_root):
    for name in (LOG, SUMMARY, TABLE):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(repo_root / name, tmp_path / name)
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "results")
    git(tmp_path, "commit", "-q", "-m", "committed results")
    return tmp_path


def rerun(path, change=None):
    """Write ``path`` again as a rerun's job writes it: its values (``change`` applied to a row and
    column) under this run's provenance; the stage versions and config the file's own."""
    info = read_provenance(path)
    frame = pq.read_table(path).to_pandas()
    if change:
        row, column, move = change
        frame.loc[row, column] = move(frame.loc[row, column])
    meta = {k: v for k, v in info.items() if k not in (*CIRCUMSTANCES, "versions", "kind")}
    if info["kind"] == "train_log":
        write_parquet(pa.Table.from_pandas(frame, preserve_index=False), path, {"kind": "train_log", **meta})
    else:
        write_table(frame, info["kind"], path, meta=meta)
    return frame


def test_a_training_log_a_last_bit_off_is_one_file_within_tolerance_named_with_its_row(checkout, repo_root):
    committed = pq.read_table(checkout / LOG).to_pandas()
    last_bit = (1, "loss", lambda x: np.nextafter(x, np.inf))
    now = rerun(checkout / LOG, last_bit)
    count, largest, cpus = reproduction_report(checkout)
    assert count.startswith("Reproduction: of 3 committed result files, 2 byte-identical, 1 within tolerance, "
                            "0 beyond tolerance")
    gap = abs(now.loss[1] - committed.loss[1])
    assert gap > 0 and f"{gap:.3g} in {LOG}" in largest
    assert f"row epoch={committed.epoch[1]}, step={committed.step[1]}, column loss" in largest
    stamped = read_provenance(repo_root / LOG).get("cpu")  # the committed copy's CPU, where it was stamped
    assert f"this run {cpu_model()}" in cpus and f"committed {stamped or 'CPU not recorded'}" in cpus
    written = (checkout / REPORT).read_text()
    assert f"| {LOG} | within |" in written and count in written


def test_a_summary_value_moved_is_beyond_tolerance_and_the_largest_difference(checkout):
    committed = pq.read_table(checkout / SUMMARY).to_pandas()
    rerun(checkout / LOG, (0, "loss", lambda x: np.nextafter(x, np.inf)))
    rerun(checkout / SUMMARY, (2, "value", lambda x: x - 1e-3))
    count, largest, _ = reproduction_report(checkout)
    assert "1 byte-identical, 1 within tolerance, 1 beyond tolerance" in count
    row = committed.iloc[2]
    assert largest.startswith(f"Largest difference: 0.001 in {SUMMARY}, row system={row.system}, ")
    assert f"metric={row.metric}, column value ({float(row.value)!r} committed, " in largest
    assert f"{SUMMARY} | beyond | 0.001" in (checkout / REPORT).read_text()


def test_a_markdown_table_cell_moved_names_its_row_and_column(checkout):
    lines = (checkout / TABLE).read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if "| ehi+faiss-ivf" in line and "0." in line)
    cells = lines[at].split("|")
    column = next(j for j, cell in enumerate(cells) if "±" in cell)
    old = cells[column].split("±")[0].strip()
    new = f"{float(old) + 0.002:.3f}"
    cells[column] = cells[column].replace(old, new, 1)
    lines[at] = "|".join(cells)
    (checkout / TABLE).write_text("\n".join(lines) + "\n")
    count, largest, _ = reproduction_report(checkout)
    assert "2 byte-identical, 0 within tolerance, 1 beyond tolerance" in count
    header = [c.strip() for c in lines[next(i for i, line in enumerate(lines) if line.startswith("|"))].split("|")]
    assert f"in {TABLE}, row {cells[1].strip()}, ehi+faiss-ivf (line {at + 1}), column {header[column]} " in largest
    assert f"({old} committed, {new} now)" in largest


def test_a_rerun_that_reproduces_every_value_reports_every_file_identical(checkout):
    rerun(checkout / LOG)
    rerun(checkout / SUMMARY)
    count, largest, _ = reproduction_report(checkout)
    assert "of 3 committed result files, 3 byte-identical, 0 within tolerance, 0 beyond tolerance" in count
    assert largest == "Largest difference: none in a table cell (every committed result is byte-identical)."


@pytest.mark.parametrize("state, why", [("no git", "is not a git checkout"), ("no commit", "has no commit yet"),
                                        ("no results", "nothing is committed under results/")])
def test_a_folder_without_committed_results_gets_one_line(tmp_path, state, why):
    (tmp_path / "results").mkdir()
    if state != "no git":
        git(tmp_path, "init", "-q")
    if state == "no results":
        (tmp_path / "README").write_text("x")
        git(tmp_path, "add", "README")
        git(tmp_path, "commit", "-q", "-m", "no results")
    (line,) = reproduction_report(tmp_path)
    assert line.startswith("Reproduction: no comparison with committed results could be made: ") and why in line
