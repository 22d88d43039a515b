"""The marker of a job with update() outputs: written while it runs, read at the next parse."""

import os
from pathlib import Path
from types import SimpleNamespace

from ehi.core.unfinished import hold, outdate_unfinished


def test_a_marker_left_dates_back_the_outputs_it_names_and_nothing_else(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a job names its outputs relative to Snakemake's working folder
    (tmp_path / "results").mkdir()
    kept, other = tmp_path / "results" / "summary.parquet", tmp_path / "results" / "other.parquet"
    kept.write_bytes(b"values")
    other.write_bytes(b"values")
    job = SimpleNamespace(output=["results/summary.parquet", "results/gone.parquet"], log=["logs/ds/main/summarize.log"])

    held = hold(job)
    assert held == Path("logs/ds/main/summarize.unfinished")
    (tmp_path / "logs" / "ds" / "garbage.unfinished").write_text("{not json")  # no marker of ours: passed over
    assert outdate_unfinished("logs") == [Path("results/summary.parquet")]  # the missing one is skipped
    assert kept.stat().st_mtime == 0 and kept.read_bytes() == b"values"
    assert other.stat().st_mtime > 0

    held.unlink()  # the job finished: the next parse leaves its outputs alone
    os.utime(kept)
    assert outdate_unfinished("logs") == [] and kept.stat().st_mtime > 0
