"""What each system of the trained-index benchmark costs to have: build time, the memory its index
holds, its bytes on disk, and for EHI's trees the training job's time and peak memory.

A peer's training is its build (k-means, the graph, ScaNN's partitioner and codebooks), timed here.
A tree's training is the pipeline's ``train_ehi`` job, read from the Snakemake benchmark file the
rule writes (``logs/<dataset>/<variant>/benchmarks/train_ehi.tsv``: wall seconds and max RSS);
its build is the FAISS export over the trained leaves, timed here. The memory an index holds is
the growth of the process's anonymous resident memory across its build (Linux ``/proc/self/statm``;
NaN elsewhere): it counts FAISS's and ScaNN's C++ allocations, which Python's allocator tracing
would not see, and leaves out the memory-mapped embeddings the build reads. Its bytes are those of
the files its library writes (a tree's FAISS export; a peer's ``Searcher.save``), measured by
writing them to a temporary folder.
"""

from __future__ import annotations

import os
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident_mb() -> float:
    """This process's anonymous resident memory in MiB, file-backed pages (the memory-mapped
    embeddings) aside (NaN where /proc is missing)."""
    try:
        resident, shared = Path("/proc/self/statm").read_text().split()[1:3]
        return (int(resident) - int(shared)) * _PAGE / 2**20
    except (OSError, IndexError, ValueError):
        return float("nan")


@contextmanager
def measured(costs: dict, key):
    """Time the block and record the resident-set growth across it as ``costs[key]``; ``key`` is a
    system's name or (system, build label)."""
    rss, start = resident_mb(), time.perf_counter()
    yield
    costs[key] = {"build_s": time.perf_counter() - start, "index_mb": resident_mb() - rss}


def index_bytes(searcher) -> int:
    """The bytes of the files ``searcher`` is written as (0 for a searcher that cannot be written)."""
    with tempfile.TemporaryDirectory(prefix="ehi-bytes-") as tmp:
        try:
            if hasattr(searcher, "write"):  # a tree: its FAISS export (+ sidecar, router)
                searcher.write(Path(tmp) / "index.faiss")
            else:
                searcher.save(Path(tmp) / "index")
        except NotImplementedError:
            return 0
        return sum(f.stat().st_size for f in Path(tmp).rglob("*") if f.is_file())


def record_bytes(costs: dict, key, searcher) -> None:
    costs[key]["index_bytes"] = index_bytes(searcher)


def training_job(logs: Path, variant: str) -> dict:
    """The ``train_ehi`` job of ``variant`` as Snakemake measured it ({} if its file is missing)."""
    tsv = Path(logs) / variant / "benchmarks" / "train_ehi.tsv"
    if not tsv.exists():
        return {}
    row = pd.read_csv(tsv, sep="\t").iloc[-1]
    return {"train_s": float(row["s"]), "train_max_rss_mb": float(row["max_rss"])}


def cost_table(costs: dict, trees: dict[str, str], logs: Path | None, n_docs: int) -> pd.DataFrame:
    """One row per system, or per (system, build) where ``costs`` is keyed so: build seconds, index
    MiB and bytes, and (trees) the training job's cost; ``trees``: {tree system: its variant}."""
    rows = []
    for key, c in costs.items():
        name, build = key if isinstance(key, tuple) else (key, "")
        job = training_job(logs, trees[name]) if logs is not None and name in trees else {}
        rows.append({"system": name, "build": build, "n_docs": n_docs, **c,
                     "train_s": job.get("train_s", float("nan")),
                     "train_max_rss_mb": job.get("train_max_rss_mb", float("nan"))})
    return pd.DataFrame(rows)


COST_COLUMNS = (("build_s", 1), ("index_mb", 0), ("index_bytes", 0), ("train_s", 0), ("train_max_rss_mb", 0))


def cost_markdown(table: pd.DataFrame) -> str:
    """The cost table; the build and index-bytes columns where the table has them."""
    shown = table.copy()
    columns = [c for c, _ in COST_COLUMNS if c in shown]
    for col, digits in COST_COLUMNS:
        if col in shown:
            shown[col] = shown[col].map(lambda v, d=digits: "-" if pd.isna(v) else f"{v:.{d}f}")
    build = ["build"] if "build" in shown and shown.build.ne("").any() else []
    return shown[["system", *build, "n_docs", *columns]].to_markdown(index=False)
