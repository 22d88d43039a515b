"""Committed trained-index benchmarks re-render from their own Parquet files: trained.md is what
benchmarks.trained_report.write_outputs makes of trained_curves (and trained_costs), byte for byte."""

from pathlib import Path

import pandas as pd
import pytest

from benchmarks.trained_report import write_outputs

REPO = Path(__file__).resolve().parents[2]
# made by rule trained_benchmark (config/webster.yaml, webster_joint.yaml, debian_joint.yaml); the older
# folders, by hand, keep an earlier report layout (no k-NN recall@10 axis)
COMMITTED = ["trained_webster", "trained_webster_joint", "trained_debian_joint"]


@pytest.mark.parametrize("name", COMMITTED)
def test_committed_trained_benchmark_re_renders_byte_identical(name, tmp_path):
    folder = REPO / "results" / "benchmarks" / name
    committed = (folder / "trained.md").read_text()
    lines = committed.split("\n")
    title = lines[0].removeprefix("# ")
    # the note: the lines between the title and the first section heading
    note = "\n".join(line for line in lines[1:lines.index(next(x for x in lines if x.startswith("## ")))] if line)
    costs = folder / "trained_costs.parquet"
    write_outputs(pd.read_parquet(folder / "trained_curves.parquet"), tmp_path, title, note,
                  pd.read_parquet(costs) if costs.exists() else None)
    assert (tmp_path / "trained.md").read_text() == committed
    assert (tmp_path / "trained_pareto.png").stat().st_size > 0
