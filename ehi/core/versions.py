"""Implementation versions of the pipeline's stages: the one place they are set.

Snakemake cannot see code changes inside ``ehi/``. Bump a stage's number when its code changes
results. ``workflow/rules/common.smk`` gives every rule of a stage the versions of that stage and
of every stage before it as a param, so a bump reruns the stage and everything after it; every
Parquet result is stamped with all of them (:func:`ehi.core.provenance.provenance`), so a result made by
older code is recognisable (:mod:`ehi.core.staleness`).

Kept free of heavy imports: the Snakefile imports it while it parses.
"""

from __future__ import annotations

# In pipeline order: a stage's results depend on its own code and on that of the stages before it.
VERSIONS = {"data": 2, "train": 1, "embed": 1, "index": 1, "search": 3, "evaluate": 1, "report": 2}
STAGES = tuple(VERSIONS)

# The stage whose rule writes each kind of table (the ``kind`` in a file's provenance).
KIND_STAGE = {
    "corpus": "data",
    "queries": "data",
    "qrels": "data",
    "train_log": "train",
    "timings": "embed",
    "leaves": "index",
    "run": "search",
    "qps": "search",
    "per_query": "evaluate",
    "summary": "evaluate",
    "significance": "evaluate",
}


def upstream_versions(stage: str, versions: dict[str, int] | None = None) -> dict[str, int]:
    """The versions ``stage``'s results depend on: its own and every earlier stage's.

    The pipeline is treated as a chain (EHI's tree index comes before every search, so a search
    of the DE counts the index version too): conservative, and what the rules' params say, so a
    result the guard calls stale is one Snakemake would rerun.
    """
    versions = VERSIONS if versions is None else versions
    if stage not in STAGES:
        raise KeyError(f"unknown stage {stage!r}; stages: {list(STAGES)}")
    return {name: versions.get(name) for name in STAGES[: STAGES.index(stage) + 1]}
