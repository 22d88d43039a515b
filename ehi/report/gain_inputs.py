"""What the gain table (:mod:`ehi.report.gain`) reads of one dataset's results: the per-query tables
of its main setting and of its variant systems (evaluation.variant_systems), seed replicas
included, which rule ``gain_table`` declares as its inputs.

A dataset of the config that runs the gain declares them as its rule ``significance`` does (the
same files); a dataset of another config (``gain.other_datasets``), or a report-only run, reads
them as committed, asked for here by the settings and systems its config names.
"""

from __future__ import annotations

import os
from pathlib import Path


def report_names(variant_systems: dict) -> dict[tuple[str, str], str]:
    """(variant, system) -> the name the report gives it: evaluation.variant_systems, else the system."""
    return {tuple(spec.rsplit("/", 1)): name for name, spec in (variant_systems or {}).items()}


def committed_per_query(results: str | os.PathLike, variant_systems: dict, seed_replicas: dict) -> list[Path]:
    """The per-query tables under ``results`` (``results/<dataset>``) the gain reads, in path order:
    every system's of the main setting, and each variant system's of its variant, in each seed's
    folder (``seed_replicas``: {variant: its own path, then its seed replicas}, ehi.evaluate.seeds;
    empty for one seed)."""
    results = Path(results)

    def folders(variant: str) -> list[Path]:
        return [results / v / "per_query" for v in seed_replicas.get(variant, [variant])]

    found = [p for folder in folders("main") for p in folder.glob("*.parquet")]
    found += [folder / f"{system}.parquet" for variant, system in report_names(variant_systems)
              for folder in folders(variant)]
    return sorted({p for p in found if p.exists()})
