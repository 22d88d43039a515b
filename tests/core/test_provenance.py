"""A rerun whose values are a file's own leaves the file's bytes: the commit is no part of a result,
and the run's circumstances (kernel settings, package version) do not rewrite equal values. So after
a rerun git lists only the committed results whose values changed."""

import os
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

import ehi.core.provenance as prov
from ehi.core.io import read_provenance, read_table, write_parquet, write_table

REPO = Path(__file__).resolve().parents[2]
QRELS = pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "relevance": [1], "split": ["test"]})
STAMPED = {"ehi_version", "versions", "cpu", "kernels", "kind"}  # what the writer stamps; the rest the caller passed


def test_the_same_values_written_at_another_commit_are_the_same_bytes(tmp_path, monkeypatch):
    monkeypatch.setattr(prov, "git_commit", lambda: "a" * 40)
    first = write_table(QRELS, "qrels", tmp_path / "a.parquet").read_bytes()
    monkeypatch.setattr(prov, "git_commit", lambda: "b" * 40)
    assert write_table(QRELS, "qrels", tmp_path / "b.parquet").read_bytes() == first


def test_equal_values_under_other_kernel_settings_keep_the_file_and_move_its_time(tmp_path, monkeypatch):
    path = tmp_path / "qrels.parquet"
    monkeypatch.setenv("MKL_CBWR", "AVX2")
    before = write_table(QRELS, "qrels", path).read_bytes()
    os.utime(path, (1_000_000, 1_000_000))
    monkeypatch.setenv("MKL_CBWR", "AVX2,STRICT")
    monkeypatch.setattr(prov, "cpu_model", lambda: "another CPU")
    monkeypatch.setattr(prov, "__version__", "9.9.9")
    write_table(QRELS, "qrels", path)
    assert path.read_bytes() == before and read_provenance(path)["kernels"]["MKL_CBWR"] == "AVX2"
    assert path.stat().st_mtime > 1_000_000  # Snakemake sees an output newer than its inputs


@pytest.mark.parametrize("change", ["values", "meta", "version"])
def test_other_values_or_another_stage_version_rewrite_the_file(tmp_path, monkeypatch, change):
    path = write_table(QRELS, "qrels", tmp_path / "qrels.parquet", meta={"seed": 0})
    before = path.read_bytes()
    if change == "version":
        monkeypatch.setattr(prov, "VERSIONS", {**prov.VERSIONS, "data": prov.VERSIONS["data"] + 1})
    df = QRELS.assign(relevance=2) if change == "values" else QRELS
    write_table(df, "qrels", path, meta={"seed": 1 if change == "meta" else 0})
    assert path.read_bytes() != before


def test_a_file_that_is_no_parquet_is_replaced(tmp_path):
    path = tmp_path / "qrels.parquet"
    path.write_bytes(b"not parquet")
    write_table(QRELS, "qrels", path)
    assert read_table(path, "qrels").doc_id.tolist() == ["d"]


COMMITTED = ["synthetic/main/summary.parquet", "synthetic/main/per_query/ehi+tree.parquet", "synthetic/significance.parquet",
             "synthetic/main/leaves.parquet", "synthetic/main/train_log/ehi.parquet"]


@pytest.mark.parametrize("name", COMMITTED)
def test_committed_results_rewritten_from_their_values_keep_their_bytes(tmp_path, monkeypatch, name):
    """Each committed result written again from its own values, as a rerun that reproduces them
    writes it, under kernel settings other than those it was made under: not one byte moves."""
    committed = REPO / "results" / name
    path = tmp_path / committed.name
    path.write_bytes(committed.read_bytes())
    info = read_provenance(path)
    monkeypatch.setenv("MKL_CBWR", f"{info['kernels'].get('MKL_CBWR')}-other")
    meta = {k: v for k, v in info.items() if k not in STAMPED}
    if info["kind"] == "train_log":
        write_parquet(pq.read_table(path), path, {"kind": "train_log", **meta})
    else:
        write_table(read_table(path), info["kind"], path, keep_extra=info["kind"] == "significance", meta=meta)
    assert path.read_bytes() == committed.read_bytes()
    assert read_provenance(path)["kernels"] == info["kernels"]
