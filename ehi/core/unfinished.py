"""A job whose ``update()`` outputs outlive its failure, and the next run that does it again.

Snakemake deletes a job's outputs before it runs, except those flagged ``update()``: these stay
in place while the job runs (so :func:`ehi.core.io.replace_parquet` can keep the bytes of a result
whose values and stage versions are the file's), and a failed job's are restored from the backup
Snakemake made. But Snakemake records the failed job as made, with its new params and its inputs'
checksums: the next run would find nothing to do, and the restored file would pass for the one the
failed job was to write.

So a rule script with ``update()`` outputs holds a marker beside its log while it runs
(:func:`hold`: the file lists the job's outputs), and deletes it after its last write. Each parse of
the Snakefile dates the outputs of every marker left back to the epoch (:func:`outdate_unfinished`):
older than the rule's script, so Snakemake's code trigger (one of the default rerun triggers) runs
the job again, while the files keep their bytes, the committed ones included. Read while the
Snakefile parses, so kept light.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

SUFFIX = ".unfinished"
SNAKEMAKE_TIMESTAMP = ".snakemake_timestamp"  # what Snakemake reads as a folder output's time


def marker(log: str | os.PathLike) -> Path:
    """The marker of the job whose log file is ``log`` (``logs/x/evaluate_de+exact.unfinished``)."""
    return Path(log).with_suffix(SUFFIX)


def hold(snakemake) -> Path:
    """Mark the job ``snakemake`` describes unfinished (its rule needs a log); the script deletes the
    returned marker once its last output is written, and a job that fails before leaves it.

    A script calls it first, before its heavy imports: Snakemake records a killed job as made (its
    update() outputs restored), so the marker must be on disk before anything can fail. Written
    with the standard library alone (an atomic rename), it lands about 1 s after the job's
    interpreter starts (Snakemake's own preamble, measured on 2 busy cores); a kill inside that
    window still leaves the old outputs recorded as the new job's."""
    path = marker(snakemake.log[0])
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    part.write_text(json.dumps([str(output) for output in snakemake.output]))
    os.replace(part, path)
    return path


def outdate_unfinished(logs_dir: str | os.PathLike, recursive: bool = True) -> list[Path]:
    """Date back to the epoch every existing output named by a marker under ``logs_dir`` (in it
    alone, where not ``recursive``); return them. Only modification times change; a marker stays
    until its job finishes."""
    outdated = []
    markers = Path(logs_dir).rglob(f"*{SUFFIX}") if recursive else Path(logs_dir).glob(f"*{SUFFIX}")
    for path in sorted(markers):
        try:
            outputs = json.loads(path.read_text())
        except (OSError, ValueError):  # not one of ours (write_json leaves whole files only)
            continue
        for output in map(Path, outputs if isinstance(outputs, list) else []):
            if output.exists():
                date_back(output)
                outdated.append(output)
    return outdated


def date_back(output: Path) -> None:
    """Set ``output``'s modification time to the epoch; a folder's timestamp file too, which
    Snakemake reads in its place."""
    for path in (output / SNAKEMAKE_TIMESTAMP, output):
        if path.exists():
            os.utime(path, (0, 0))
