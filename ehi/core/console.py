"""What a person follows a run by on Snakemake's console.

Every line a job writes there carries the job's label, ``[synthetic seed~1 floor]`` (dataset, seed,
the setting by the name the config gives it): several jobs share the console, and their lines
interleave. Snakemake's own lines, under the README's ``--quiet rules host``, come down to one a
job: ``12 of 57 steps (21%) done: train_ehi [seed~1 floor]`` as each finishes (:func:`one_line_a_job`).
The job blocks, the scheduler's "Select jobs to execute..." / "Execute 2 jobs..." pairs and the
finished-job lines stay in the run's log file (``.snakemake/log/``), which this does not touch.

Nothing here imports Snakemake: the library installs without it, and the Snakefile hands in its logger.
"""

from __future__ import annotations

import json
import logging
import os

# {variant path: what a console line calls it} the workflow puts in the jobs' environment
# (workflow/rules/settings.smk, from :func:`console_names`)
VARIANT_NAMES_ENV = "EHI_VARIANT_NAMES"
# {training folder: [its dataset, its variant]} the workflow puts in the jobs' environment
# (workflow/rules/settings.smk, from :func:`training_jobs`): a training, run as a command
# (workflow/scripts/train.py), is told by the rule's side which job it is, not by its folder's parts
TRAININGS_ENV = "EHI_TRAININGS"


def console_names(names: dict[str, str], seed_replicas: dict[str, dict[str, int]]) -> dict[str, str]:
    """{variant path: what a console line calls it}: each setting by its name in ``names``, each seed
    replica (``seed_replicas``: {variant: {path: seed}}, ehi.evaluate.seeds.replicas) by its seed,
    then its setting's name (``seed~1 floor``); a setting without a name by its path ("main")."""
    out = dict(names)
    for variant, paths in seed_replicas.items():
        out.update({path: f"seed~{seed} {names.get(variant, variant)}" for path, seed in paths.items() if path != variant})
    return out


def setting_label(variant: str) -> str:
    """``seed~1 floor`` for the variant path ``indexer_init~ivf/.../floor~kmeans/seed~1``: what
    $EHI_VARIANT_NAMES calls it (:func:`console_names`), its path where it names it nothing."""
    return json.loads(os.environ.get(VARIANT_NAMES_ENV) or "{}").get(variant, variant)


def label(dataset: str | None, variant: str | None = None) -> str:
    """``[synthetic seed~1 floor]``; ``[synthetic]`` for a job of the whole dataset (a table, the
    claims); "" when the dataset is unknown (a job across datasets names them in its own lines)."""
    if not dataset:
        return ""
    return "[" + " ".join([dataset, *([setting_label(variant)] if variant else [])]) + "]"


def training_jobs(dataset: str, folders: dict[str, str]) -> dict[str, list[str]]:
    """{training folder: [dataset, variant]} of ``dataset``'s trainings (``folders``: {folder: the
    variant trained there}, ehi.core.catalog.training_folder): what :func:`training_label` looks up."""
    return {os.path.normpath(folder): [dataset, variant] for folder, variant in folders.items()}


def training_label(folder: str | os.PathLike) -> str:
    """The label of the training writing into ``folder`` (``--out-dir``, relative to the run's working
    folder as the rule gives it): its dataset and setting as $EHI_TRAININGS names them; "" for a
    folder it names nothing (a training run by hand)."""
    named = json.loads(os.environ.get(TRAININGS_ENV) or "{}").get(os.path.normpath(os.path.relpath(folder)))
    return label(*named) if named else ""


def job_label(snakemake) -> str:
    """The label of the job a rule script's ``snakemake`` object describes: its config's dataset and
    its ``variant`` wildcard."""
    dataset = ((getattr(snakemake, "config", None) or {}).get("dataset") or {}).get("name")
    return label(dataset, getattr(getattr(snakemake, "wildcards", None), "variant", None))


class _OneLineAJob(logging.Filter):
    """On Snakemake's console handler: a finished job's line names it (rule, setting, its other
    wildcards' values: the system searched), the job table at the start becomes its total; the lines
    a job started or finished by are left out."""

    DROPPED = {"job_started", "job_finished"}  # snakemake_interface_logger_plugins' LogEvent values

    def __init__(self):
        super().__init__()
        self.jobs: dict[int, str] = {}  # jobid: "rule [setting]", from the job's (otherwise quiet) job block
        self.finished: list[str] = []  # since the last progress line

    def filter(self, record: logging.LogRecord) -> bool:
        event = str(getattr(record, "event", "") or "")
        if event == "job_info":  # rejected by Snakemake's own filter under --quiet rules; read first
            wildcards = dict(getattr(record, "wildcards", None) or {})
            variant = wildcards.pop("variant", None)
            self.jobs[record.jobid] = " ".join([record.rule_name, *([f"[{setting_label(variant)}]"] if variant else []),
                                                *map(str, wildcards.values())])
        elif event == "job_finished":
            self.finished.append(self.jobs.pop(getattr(record, "job_id", None), ""))
        elif event == "progress":
            done = [job for job in self.finished if job]
            self.finished = []
            record.ehi_line = f"{record.done} of {record.total} steps ({100 * record.done // max(record.total, 1)}%) done" + (
                f": {', '.join(done)}" if done else "")
        elif event == "run_info" and isinstance(getattr(record, "stats", None), dict):
            record.ehi_line = f"{record.stats.get('total', 0)} jobs to run (each listed in the run's log file)"
        return event not in self.DROPPED and record.getMessage() != "Select jobs to execute..."


class _Lines(logging.Formatter):
    """Snakemake's formatter, but for the lines :class:`_OneLineAJob` rewrote."""

    def __init__(self, formatter: logging.Formatter | None):
        super().__init__()
        self.formatter = formatter or logging.Formatter()

    def format(self, record: logging.LogRecord) -> str:
        line = record.__dict__.pop("ehi_line", None)  # this handler's alone: the log file keeps Snakemake's
        return line if line is not None else self.formatter.format(record)


def one_line_a_job(logger: logging.Logger, quiet, dryrun: bool) -> None:
    """Snakemake's console (``logger``'s stream handlers) cut to a line a job, when the run was asked
    to leave out job blocks (``--quiet rules``; ``quiet`` is Snakemake's set of Quietness values) and
    runs jobs (a dry run keeps its table of them). Once: a second call finds it in place."""
    if dryrun or "RULES" not in {getattr(q, "name", str(q)).upper() for q in quiet or ()}:
        return
    for handler in logger.handlers:
        if not isinstance(handler, logging.StreamHandler) or isinstance(handler, logging.FileHandler):
            continue
        if any(isinstance(f, _OneLineAJob) for f in handler.filters):
            continue
        handler.filters.insert(0, _OneLineAJob())  # before Snakemake's, which drops the job blocks it reads
        handler.setFormatter(_Lines(handler.formatter))
