"""What the gain table (:mod:`ehi.report.gain`) reads of one dataset's results: the per-query tables
of its main setting and of its variant systems (evaluation.variant_systems), seed replicas
included, which rule ``gain_table`` declares as its inputs.

A dataset of the config that runs the gain declares them as its rule ``significance`` does (the
same files); a dataset of another config (``gain.other_datasets``), or a report-only run, reads
them as committed, chosen here from the files under its results folder.
"""

from __future__ import annotations

import os
from pathlib import Path

from ehi.evaluate.seeds import split_replica


def report_names(variant_systems: dict) -> dict[tuple[str, str], str]:
    """(variant, system) -> the name the report gives it: evaluation.variant_systems, else the system."""
    return {tuple(spec.rsplit("/", 1)): name for name, spec in (variant_systems or {}).items()}


def gain_reads(variant: str, system: str, names: dict[tuple[str, str], str]) -> bool:
    """Whether the gain reads the per-query rows of ``system`` searched in the folder ``variant``
    (a seed replica counts as its variant): every system of the main setting, and the variant systems."""
    base = split_replica(variant)[0]
    return base == "main" or (base, system) in names


def committed_per_query(results: str | os.PathLike, variant_systems: dict) -> list[Path]:
    """The per-query tables under ``results`` (``results/<dataset>``) the gain reads, in path order."""
    results, names = Path(results), report_names(variant_systems)
    return [p for p in sorted(results.rglob("per_query/*.parquet"))
            if gain_reads(p.parent.parent.relative_to(results).as_posix(), p.stem, names)]
