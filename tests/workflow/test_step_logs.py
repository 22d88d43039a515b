"""The step log reaches results by rule (train_steps, train_steps_figure) only where a setting's EHI
training sets train.diag_every; a config without it schedules neither."""

import pandas as pd

from test_workflow import REPO, TEST_CONFIG, jobs_of, snakemake  # tests/workflow/test_workflow.py

STEPS = "results/test/main/train_steps/ehi"
DIAG_LAYER = str(REPO / "config" / "test" / "diag_every.yaml")  # train.diag_every: 2


def test_without_diag_every_nothing_asks_for_a_step_log(tmp_path):
    for target in ("all", "train_all", "step_logs"):
        out = snakemake("-n", target, "--configfile", TEST_CONFIG, workdir=tmp_path).stdout
        assert not jobs_of(out) & {"train_steps", "train_steps_figure"}, (target, jobs_of(out))


def test_step_logs_asks_for_every_ehi_training_of_the_config(tmp_path):
    out = snakemake("-n", "step_logs", "--configfile", TEST_CONFIG, DIAG_LAYER, workdir=tmp_path).stdout
    jobs = out.split("Job stats:")[1]
    # the main setting and the two ablation variants of the test config train EHI; DE keeps no step log
    assert "train_steps " in jobs and "train_steps_figure " in jobs
    assert {line.split()[1] for line in jobs.splitlines() if line.startswith(("train_steps ", "train_ehi "))} == {"3"}
    assert "train_de" not in jobs


def test_a_training_with_diag_every_gives_its_step_log_and_figure(tmp_path):
    snakemake("--cores", "1", f"{STEPS}.png", "--configfile", TEST_CONFIG, DIAG_LAYER, workdir=tmp_path)
    log = pd.read_parquet(tmp_path / f"{STEPS}.parquet")
    assert log["step"].tolist() == list(range(0, int(log["step"].max()) + 1, 2)) and set(log["epoch"]) == {1, 2}
    assert {"leaf_empty_fraction", "leaf_entropy", "grad_indexing_tower", "grad_indexing_router"} <= set(log)
    assert (tmp_path / f"{STEPS}.png").stat().st_size > 0
    again = snakemake("-n", f"{STEPS}.png", "--configfile", TEST_CONFIG, DIAG_LAYER, workdir=tmp_path)
    assert "Nothing to be done" in again.stdout + again.stderr
