"""A failing job never costs the results it would replace, and a rerun of equal values leaves a
committed result's bytes as they were, each tried with a real Snakemake run: a report job fed a
corrupt Parquet keeps every table and figure as it was (and renders again next time), a result job
keeps its file whether it fails or writes the values it holds, and a retraining that fails leaves
the previous model loadable."""

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
from safetensors.torch import load_file

from ehi import __version__
from ehi.core.io import read_provenance, read_table, write_table
from ehi.core.provenance import PROVENANCE_KEY
from ehi.model.encoder import load_encoder
from ehi.model.tree import load_indexer

REPO = Path(__file__).resolve().parents[2]
SNAKEMAKE = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile")]
TEST_CONFIG = str(REPO / "config" / "test" / "test.yaml")
SUMMARY = "results/synthetic/main/summary.parquet"
# the summary job alone, over the committed per-query results (nothing upstream is scheduled)
SUMMARIZE = [SUMMARY, "--allowed-rules", "summarize", "--cores", "1"]


def snakemake(workdir, *args):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    return subprocess.run([*SNAKEMAKE, "--directory", str(workdir), *args], capture_output=True, text=True,
                          env=env, timeout=600)


def digests(root: Path, *folders: str) -> dict[str, str]:
    """sha256 of every file under ``folders`` (Snakemake's directory timestamps aside)."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for folder in folders for p in sorted((root / folder).rglob("*"))
            if p.is_file() and p.name != ".snakemake_timestamp"}


def scheduled(workdir, *args) -> str:
    proc = snakemake(workdir, "-n", *args)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout + proc.stderr


def test_corrupt_summary_keeps_every_table_and_figure_and_renders_again_next_run(tmp_path):
    shutil.copytree(REPO / "results" / "synthetic", tmp_path / "results" / "synthetic")  # the committed cache
    first = snakemake(tmp_path, "tables", "--cores", "1")
    assert first.returncode == 0, first.stderr[-3000:]
    before = digests(tmp_path, "results/tables", "results/figures")
    assert any(name.endswith(".png") for name in before) and any(name.endswith(".tex") for name in before)
    summary = tmp_path / "results" / "synthetic" / "main" / "summary.parquet"
    good = summary.read_bytes()
    summary.write_bytes(b"not a parquet file\n")

    failed = snakemake(tmp_path, "tables", "--cores", "1")
    assert failed.returncode != 0
    errors = [line for line in failed.stderr.splitlines() if " ERROR " in line]
    assert len(errors) == 1 and f"{summary}: not a readable Parquet file" in errors[0], failed.stderr[-3000:]
    assert "Traceback" not in failed.stderr
    assert digests(tmp_path, "results/tables", "results/figures") == before

    # Snakemake records the failed job as made; the next run renders again all the same
    assert re.search(r"^tables\s+1$", scheduled(tmp_path, "tables"), re.M)
    summary.write_bytes(good)
    fixed = snakemake(tmp_path, "tables", "--cores", "1")
    assert fixed.returncode == 0, fixed.stderr[-3000:]
    assert "Nothing to be done" in scheduled(tmp_path, "tables")


def committed_main_results(root: Path) -> Path:
    """The committed main results in ``root``, beside the prepared data whose judged queries rule
    summarize holds the per-query tables to (ehi/evaluate/result_checks.py)."""
    prepared = snakemake(root, "resources/synthetic/data/qrels.parquet", "--cores", "1")
    assert prepared.returncode == 0, prepared.stderr[-3000:]
    shutil.copytree(REPO / "results" / "synthetic" / "main", root / "results" / "synthetic" / "main")
    return root / SUMMARY


def test_a_rerun_of_the_values_a_result_holds_keeps_its_bytes_and_other_values_replace_it(tmp_path):
    summary = committed_main_results(tmp_path)
    made = snakemake(tmp_path, *SUMMARIZE, "--forcerun", "summarize")
    assert made.returncode == 0, made.stderr[-3000:]
    # the file as another package version wrote it, its kernel settings left to the machine
    table = pq.read_table(summary)
    elsewhere = {**json.loads(table.schema.metadata[PROVENANCE_KEY]), "ehi_version": "0.0.1", "kernels": None}
    pq.write_table(table.replace_schema_metadata({PROVENANCE_KEY: json.dumps(elsewhere, sort_keys=True)}), summary)
    held = summary.read_bytes()

    again = snakemake(tmp_path, *SUMMARIZE, "--forcerun", "summarize")
    assert again.returncode == 0, again.stderr[-3000:]
    assert summary.read_bytes() == held  # an update() output: the job found the file and kept it
    assert not list((tmp_path / "logs").rglob("*.unfinished"))

    before = read_table(summary, "summary")
    per_query = tmp_path / "results" / "synthetic" / "main" / "per_query" / "de+exact.parquet"
    rows = read_table(per_query, "per_query")
    write_table(rows.assign(value=rows.value / 2), "per_query", per_query, read_provenance(per_query))
    changed = snakemake(tmp_path, *SUMMARIZE)  # no --forcerun: the changed input reruns the job
    assert changed.returncode == 0, changed.stderr[-3000:]
    after = read_table(summary, "summary")
    de = after.system == "de+exact"
    assert after[de].value.tolist() == (before[before.system == "de+exact"].value / 2).tolist()
    assert after[~de].value.tolist() == before[before.system != "de+exact"].value.tolist()
    assert read_provenance(summary)["ehi_version"] == __version__  # written anew, with this run's provenance


def test_a_failing_result_job_keeps_its_file_and_runs_again_next_time(tmp_path):
    summary = committed_main_results(tmp_path)
    held = summary.read_bytes()
    per_query = tmp_path / "results" / "synthetic" / "main" / "per_query" / "de+exact.parquet"
    good = per_query.read_bytes()
    per_query.write_bytes(b"not a parquet file\n")
    failed = snakemake(tmp_path, *SUMMARIZE, "--forcerun", "summarize")
    assert failed.returncode != 0 and f"{per_query.relative_to(tmp_path)}: not a readable Parquet file" in failed.stderr
    assert summary.read_bytes() == held  # Snakemake's backup, restored

    # Snakemake records the failed job as made, with the corrupt input's checksum: its marker
    # (ehi/core/unfinished.py) has the next run do it again all the same
    assert re.search(r"^summarize\s+1$", scheduled(tmp_path, *SUMMARIZE), re.M)
    per_query.write_bytes(good)
    fixed = snakemake(tmp_path, *SUMMARIZE)
    assert fixed.returncode == 0, fixed.stderr[-3000:]
    assert summary.read_bytes() == held
    assert "Nothing to be done" in scheduled(tmp_path, *SUMMARIZE)


def test_failing_retrain_leaves_the_previous_model_loadable(tmp_path):
    target = "resources/test/main/ehi/train/indexer.safetensors"
    trained = snakemake(tmp_path, target, "--cores", "2", "--configfile", TEST_CONFIG)
    assert trained.returncode == 0, trained.stderr[-3000:]
    run = tmp_path / "resources" / "test" / "main" / "ehi" / "train"
    model = {**digests(run, "encoder"), "indexer.safetensors": digests(run, ".")["indexer.safetensors"]}

    # a changed setting retrains (Snakemake deletes the outputs first), and the retraining fails
    broken = tmp_path / "broken.yaml"
    broken.write_text("train:\n  lr_encoder: 1.0e+30\n  lr_indexer: 1.0e+30\n")  # a non-finite loss at once
    failed = snakemake(tmp_path, target, "--cores", "2", "--configfile", TEST_CONFIG, str(broken))
    assert failed.returncode != 0 and not (run / "indexer.safetensors").exists()
    log = (tmp_path / "logs" / "test" / "main" / "train_ehi.log").read_text()
    assert f"the last model trained here is kept, loadable, in {run.relative_to(tmp_path) / 'previous'}" in log

    previous = run / "previous"
    kept = {**digests(previous, "encoder"), "indexer.safetensors": digests(previous, ".")["indexer.safetensors"]}
    assert kept == model
    load_encoder(str(previous / "encoder"), max_length=32, device="cpu")
    indexer = load_indexer(previous)
    saved = load_file(str(previous / "indexer.safetensors"))
    assert all(v.equal(saved[k]) for k, v in indexer.state_dict().items())
    assert re.search(r"^train_ehi\s+1$", scheduled(tmp_path, target, "--configfile", TEST_CONFIG, str(broken)), re.M)


def test_a_hub_encoder_missing_from_the_cache_offline_is_refused_before_any_model_is_deleted(tmp_path):
    typo = tmp_path / "typo.yaml"
    typo.write_text("encoder:\n  name: no-such-model-xyz\n")
    proc = snakemake(tmp_path, "-n", "all", "--configfile", TEST_CONFIG, str(typo))
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "config encoder.name: 'no-such-model-xyz' is not in the Hugging Face cache" in proc.stderr
