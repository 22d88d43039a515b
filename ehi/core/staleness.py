"""Which cached results were made by other stage versions than the code's.

Every Parquet result carries the implementation versions of all stages at the time it was written
(:func:`ehi.core.provenance.provenance`). A result is *stale* when a version its stage depends on
(:func:`ehi.core.versions.upstream_versions`) differs from the current one, or when it carries no
versions at all (written before they were stamped): then nothing says which code made it, and it
is reported, never passed silently. Files of kinds outside the pipeline's stages (benchmarks,
dev-split tuning) have their own versions and are not judged here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ehi.core.io import read_provenance
from ehi.core.versions import KIND_STAGE, upstream_versions


@dataclass(frozen=True)
class StaleResult:
    path: Path
    stage: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path} ({self.stage}): {self.reason}"


def stale_reason(path: str | os.PathLike, versions: dict[str, int] | None = None) -> tuple[str, str] | None:
    """``(stage, reason)`` if the result at ``path`` is stale against ``versions`` (default: the
    code's), ``None`` if it is current or of a kind no stage owns."""
    info = read_provenance(path)
    stage = KIND_STAGE.get(info.get("kind"))
    if stage is None:
        return None
    if "versions" not in info:
        made_by = info.get("git_commit", "unknown")[:7]
        return stage, f"no stage versions stamped (written at commit {made_by}, before they were)"
    wanted = upstream_versions(stage, versions)
    stamped = upstream_versions(stage, info["versions"])
    moved = [f"{name} {stamped[name]} -> {wanted[name]}" for name in wanted if stamped[name] != wanted[name]]
    return (stage, "made by other versions: " + ", ".join(moved)) if moved else None


def stale_results(root: str | os.PathLike, versions: dict[str, int] | None = None) -> list[StaleResult]:
    """Every stale Parquet result under ``root`` (e.g. ``results/synthetic``), in path order."""
    stale = []
    for path in sorted(Path(root).rglob("*.parquet")):
        found = stale_reason(path, versions)
        if found:
            stale.append(StaleResult(path, *found))
    return stale


def describe(stale: list[StaleResult], limit: int = 5) -> str:
    """A few lines naming the stale results and how to refresh them."""
    lines = [str(s) for s in stale[:limit]]
    if len(stale) > limit:
        lines.append(f"... and {len(stale) - limit} more")
    return "\n".join([f"{len(stale)} cached result(s) stale against the code's stage versions:", *lines,
                      "rerun the pipeline (`snakemake --cores 8 all` with the config that made them) to refresh them"])
