"""The lines a user follows a training by: a start line, one per epoch (losses, dev metrics, time)
and an end line, on the ``ehi.train.progress`` logger the training script also sends to stdout."""

import logging
import subprocess
import sys

import pytest

from ehi.model.encoder import load_encoder
from ehi.train.loop import train
from tests.train.test_loop import config, tiny_dataset


def test_training_says_start_each_epoch_and_end(tmp_path, caplog):
    cfg = config(epochs=2, dev_eval=False)
    with caplog.at_level(logging.INFO, logger="ehi.train.progress"):
        train(tiny_dataset(), load_encoder("tiny-random", max_length=16, device="cpu"), cfg, tmp_path, progress=False)
    lines = [r.getMessage() for r in caplog.records if r.name == "ehi.train.progress"]
    assert len(lines) == 4, lines
    assert lines[0].startswith("train ehi: ") and " pairs, " in lines[0] and "2 epochs" in lines[0]
    for epoch, line in enumerate(lines[1:3], 1):
        assert line.startswith(f"train ehi: epoch {epoch}/2 loss=") and "siamese=" in line and line.endswith(" s)")
    assert lines[3].startswith("train ehi: done after 2 epochs") and str(tmp_path) in lines[3]


@pytest.mark.slow  # a training in a fresh interpreter
def test_the_training_script_prints_the_lines_on_stdout_and_the_rest_on_stderr(tmp_path, repo_root):
    tiny_dataset().write(tmp_path / "data")
    args = ["--data-dir", str(tmp_path / "data"), "--encoder", "tiny-random", "--out-dir", str(tmp_path / "run"),
            "--train", repr(config(epochs=1, dev_eval=False).to_dict()), "--log-table", str(tmp_path / "log.parquet")]
    proc = subprocess.run([sys.executable, str(repo_root / "workflow" / "scripts" / "train.py"), *args], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = [line for line in proc.stdout.splitlines() if line.strip()]
    # the start line, within-epoch progress (each quarter of the epoch's steps), the epoch line, the end
    assert "batches per epoch" in out[0] and "train ehi: epoch 1/1 loss=" in out[-2] and "done after 1 epochs" in out[-1], out
    assert out[1:-2] and all("train ehi: epoch 1/1 step " in line for line in out[1:-2]), out
    assert "train ehi: epoch 1/1" in proc.stderr  # the rule's log file gets them too


def test_within_an_epoch_a_line_each_minute_with_rate_and_time_left(caplog):
    from ehi.train.progress import EpochProgress

    now = [0.0]
    progress = EpochProgress("ehi", 2, 5, n_batches=400, every=60.0, clock=lambda: now[0])
    with caplog.at_level(logging.INFO, logger="ehi.train.progress"):
        for done, t in ((50, 30.0), (100, 60.0), (150, 90.0), (240, 120.0), (400, 200.0)):
            now[0] = t
            progress.step(done, {"loss": 0.5 * done})
    lines = [r.getMessage() for r in caplog.records if r.name == "ehi.train.progress"]
    # at 60 s (100 steps: 1.67 steps/s, 300 left) and 120 s (240 steps: 2 steps/s, 160 left); not
    # at 30 s or 90 s (under a minute since the last line), not at the end (the epoch line says it)
    assert lines == ["train ehi: epoch 2/5 step 100/400 (25%) loss=0.5000, 1.67 steps/s, 3 min 0 s left in the epoch",
                     "train ehi: epoch 2/5 step 240/400 (60%) loss=0.5000, 2.00 steps/s, 1 min 20 s left in the epoch"]


def test_a_short_epoch_gets_a_line_at_each_quarter_of_its_steps(caplog):
    from ehi.train.progress import EpochProgress

    now = [0.0]
    progress = EpochProgress("de", 1, 2, n_batches=8, every=60.0, clock=lambda: now[0])
    with caplog.at_level(logging.INFO, logger="ehi.train.progress"):
        for done in range(1, 9):
            now[0] = 0.5 * done  # 2 steps/s, far under a minute in all
            progress.step(done, {"loss": 1.0 * done})
    steps = [r.getMessage().split(" step ")[1].split(" ")[0] for r in caplog.records if r.name == "ehi.train.progress"]
    assert steps == ["2/8", "4/8", "6/8"]  # the last quarter is the epoch line's


def test_a_trainings_console_label_names_its_dataset_seed_and_setting(monkeypatch):
    """The label is what the workflow named the training in its folder with (settings.smk fills
    $EHI_TRAININGS as it fills $EHI_VARIANT_NAMES), read from no part of the folder."""
    import json

    from ehi.core.catalog import training_folder
    from ehi.core.console import TRAININGS_ENV, VARIANT_NAMES_ENV, console_names, training_jobs
    from ehi.train.progress import job_label

    floor = "indexer_init~ivf/floor~kmeans"
    seeds = {"main": {"main": 0, "seed~1": 1}, floor: {floor: 0, f"{floor}/seed~2": 2}}
    monkeypatch.setenv(VARIANT_NAMES_ENV, json.dumps(console_names({floor: "floor"}, seeds)))
    variants = ["main", "seed~1", floor, f"{floor}/seed~2", "height~1"]
    monkeypatch.setenv(TRAININGS_ENV, json.dumps(training_jobs(
        "synthetic", {training_folder("synthetic", v, m): v for v in variants for m in ("de", "ehi")})))
    assert job_label("resources/synthetic/main/ehi/train") == "[synthetic main]"
    assert job_label("resources/synthetic/seed~1/de/train/") == "[synthetic seed~1 main]"
    assert job_label("resources/synthetic/indexer_init~ivf/floor~kmeans/seed~2/ehi/train") == "[synthetic seed~2 floor]"
    assert job_label("resources/synthetic/height~1/ehi/train") == "[synthetic height~1]"  # no name: its path
    # a folder the workflow named no training in (a path of the same shape, a training run by hand)
    assert job_label("resources/synthetic/height~2/ehi/train") == ""
    assert job_label("/tmp/work/ehi/train") == ""


def test_the_label_is_looked_up_by_the_folder_wherever_the_run_is(monkeypatch, tmp_path):
    """--out-dir is relative to the working folder the workflow runs in; an absolute path to the
    same folder names the same training."""
    import json

    from ehi.core.console import TRAININGS_ENV, training_jobs
    from ehi.train.progress import job_label

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(TRAININGS_ENV, json.dumps(training_jobs("ds", {"resources/ds/main/de/train": "main"})))
    assert job_label(tmp_path / "resources" / "ds" / "main" / "de" / "train") == "[ds main]"
