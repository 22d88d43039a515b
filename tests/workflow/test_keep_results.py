"""A failing job never costs the results it would replace, each tried with a real Snakemake run:
a report job fed a corrupt Parquet keeps every table and figure as it was (and renders again next
time), and a retraining that fails leaves the previous model loadable."""

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from safetensors.torch import load_file

from ehi.model.encoder import load_encoder
from ehi.model.tree import load_indexer

REPO = Path(__file__).resolve().parents[2]
SNAKEMAKE = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile")]
TEST_CONFIG = str(REPO / "config" / "test" / "test.yaml")


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
