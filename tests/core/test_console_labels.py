"""Snakemake's console cut to a line a job (ehi.core.console.one_line_a_job) on records as Snakemake
9 logs them, and the label every job's console line carries."""

import io
import json
import logging
from types import SimpleNamespace

from ehi.core.console import VARIANT_NAMES_ENV, console_names, job_label, label, one_line_a_job


def _snakemake_logger(name: str, folder):
    """A logger like Snakemake's: a stream handler whose own filter drops job blocks (--quiet rules),
    and a log file's handler."""
    logger = logging.getLogger(name)
    logger.propagate, logger.level = False, logging.INFO
    console, logfile = io.StringIO(), folder / f"{name}.log"
    stream = logging.StreamHandler(console)
    stream.addFilter(lambda r: getattr(r, "event", None) != "job_info")
    stream.setFormatter(logging.Formatter("%(message)s"))
    file = logging.FileHandler(logfile)
    file.setFormatter(logging.Formatter("%(message)s"))
    logger.handlers = [stream, file]
    return logger, console, logfile


def _one_job(logger, jobid: int, variant: str, done: int, **wildcards) -> None:
    logger.info("Select jobs to execute...")
    logger.info("Execute 1 jobs...", extra={"event": "job_started", "jobs": [jobid]})
    logger.info(" Rule: train_ehi", extra={"event": "job_info", "jobid": jobid, "rule_name": "train_ehi",
                                          "wildcards": {"variant": variant, **wildcards}})
    logger.info(f"Finished jobid: {jobid} (Rule: train_ehi)", extra={"event": "job_finished", "job_id": jobid})
    logger.info(None, extra={"event": "progress", "done": done, "total": 4})


def test_under_quiet_rules_each_job_is_one_console_line_and_the_log_file_keeps_everything(monkeypatch, tmp_path):
    floor = "indexer_init~ivf/floor~kmeans"
    monkeypatch.setenv(VARIANT_NAMES_ENV, json.dumps(console_names({floor: "floor"}, {floor: {floor: 0, f"{floor}/seed~1": 1}})))
    logger, console, logfile = _snakemake_logger("toy.snakemake.quiet", tmp_path)
    one_line_a_job(logger, [SimpleNamespace(name="RULES"), SimpleNamespace(name="HOST")], dryrun=False)
    one_line_a_job(logger, [SimpleNamespace(name="RULES")], dryrun=False)  # in place already: once
    logger.info("Job stats: ...", extra={"event": "run_info", "stats": {"train_ehi": 4, "total": 4}})
    _one_job(logger, 3, "indexer_init~ivf/floor~kmeans/seed~1", 1)
    _one_job(logger, 4, "main", 2, system="de+faiss-ivf")
    assert console.getvalue().splitlines() == [
        "4 jobs to run (each listed in the run's log file)",
        "1 of 4 steps (25%) done: train_ehi [seed~1 floor]",
        "2 of 4 steps (50%) done: train_ehi [main] de+faiss-ivf"]
    logger.handlers[1].flush()
    kept = logfile.read_text()
    assert kept.count("Select jobs to execute...") == 2 and "Finished jobid: 4 (Rule: train_ehi)" in kept
    assert "Job stats: ..." in kept and "1 of 4 steps" not in kept  # Snakemake's own progress formatting there


def test_without_quiet_rules_or_in_a_dry_run_the_console_is_snakemakes(tmp_path):
    for quiet, dryrun in (([SimpleNamespace(name="HOST")], False), ([SimpleNamespace(name="RULES")], True)):
        logger, console, _ = _snakemake_logger(f"toy.snakemake.{dryrun}", tmp_path)
        one_line_a_job(logger, quiet, dryrun=dryrun)
        logger.info("Select jobs to execute...")
        assert console.getvalue() == "Select jobs to execute...\n"


def test_a_jobs_label_names_dataset_seed_and_setting(monkeypatch):
    shape = "height~1/branching~8"
    names = console_names({shape: "tree shape: height 1"}, {"main": {"main": 0, "seed~2": 2}, shape: {shape: 0, f"{shape}/seed~2": 2}})
    monkeypatch.setenv(VARIANT_NAMES_ENV, json.dumps(names))
    assert label("synthetic", "height~1/branching~8/seed~2") == "[synthetic seed~2 tree shape: height 1]"
    assert label("synthetic", "seed~2") == "[synthetic seed~2 main]" and label("synthetic", shape) == "[synthetic tree shape: height 1]"
    assert label("synthetic", "height~3") == "[synthetic height~3]"  # a path the environment names nothing: itself
    assert label("synthetic") == "[synthetic]" and label(None, "main") == ""
    job = SimpleNamespace(config={"dataset": {"name": "test"}}, wildcards=SimpleNamespace(variant="main"))
    assert job_label(job) == "[test main]"
    assert job_label(SimpleNamespace(rule="toy")) == ""
