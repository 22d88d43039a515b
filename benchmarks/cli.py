"""Entry points shared by the Snakemake rules and the command line.

``python -m benchmarks.cli [--quick] OUT_DIR`` runs every family and writes the same files the
``benchmarks`` target writes (without Snakemake's bookkeeping).
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

import pandas as pd
import pyarrow as pa

from ehi.core.io import write_parquet
from ehi.core.provenance import git_commit

from benchmarks import build, data, export, report, search, stream, systems, training
from benchmarks.settings import settings

log = logging.getLogger(__name__)

def _write(df: pd.DataFrame, path, meta: dict) -> None:
    # a benchmark's timings change every run: its file names the commit it measured (summary.md shows it)
    write_parquet(pa.Table.from_pandas(df, preserve_index=False), path, {"kind": "benchmark", "git_commit": git_commit(), **meta})


def run_search(s: dict, out: dict, threads: int) -> None:
    curves = []
    for name, n in s["datasets"]:
        loaded = data.load(name, n, s["n_queries"])
        if loaded is None:
            continue
        docs, queries = loaded
        names = [x for x in systems.EHI + systems.PEERS if x in s.get("systems", systems.EHI + systems.PEERS)]
        curves.append(search.run(name, docs, queries, names=names, rounds=s["rounds"], threads=threads,
                                 n_latency=s["n_latency"], tree_steps=s["tree_steps"]))
    curves = pd.concat(curves, ignore_index=True)
    _write(curves, out["curves"], s)
    _write(search.matched(curves), out["matched"], s)


def run_export(s: dict, out: dict, threads: int) -> None:
    curves = []
    names = s.get("systems", export.SYSTEMS)
    # ``groups``: systems built and timed together; at 10^6 holding every index at once would not
    # fit in memory, so the float32 and the compressed systems are measured one group after the other
    # a dataset entry may name its own systems: [name, n, [system, ...]]
    for name, n, *only in s["datasets"]:
        loaded = data.load(name, n, s["n_queries"])
        wanted = [x for x in names if not only or x in only[0]]
        for group in (s.get("groups") or [wanted]) if loaded is not None else []:
            curves.append(export.run(name, *loaded, names=[x for x in group if x in wanted], rounds=s["rounds"],
                                     threads=min(threads, s.get("threads", threads)), n_latency=s["n_latency"],
                                     tree_steps=s["tree_steps"], max_frac=s.get("max_frac")))
    curves = pd.concat(curves, ignore_index=True)
    _write(curves, out["curves"], s)
    _write(export.matched(curves), out["matched"], s)


def run_build(s: dict, out: dict, threads: int) -> None:
    names = s.get("systems", ("ehi-scan",) + systems.PEERS)
    builds, beams = build.run(s["sizes"], names=names, n_queries=s["n_queries"], threads=threads,
                              repeats_small=s["repeats_small"], tree_steps=s["tree_steps"], big=s["big"])
    beams, coef = build.fit_cost(beams)
    _write(builds, out["builds"], s)
    _write(beams, out["beams"], {**s, **coef})


def run_training(s: dict, out: dict, threads: int) -> None:
    threads = min(threads, s.get("threads", threads))
    tables = training.run(threads=threads, steps=s["steps"], batch_size=s["batch_size"], n_docs=s["n_docs"],
                          n_queries=s["n_queries"], encoder_name=s.get("encoder", "minilm"))
    for key, df in tables.items():
        _write(df, out[key], s)


def run_stream(s: dict, out: dict, threads: int) -> None:
    _write(stream.run(s["max_queries"], n_docs=s.get("n_docs", 3000), lengths=s.get("lengths")), out["stream"], s)


def run_report(s: dict, out: dict, threads: int) -> None:
    report.write(Path(out["summary"]).parent, quick=bool(s["quick"]), notes=s.get("notes"))


RULES = {"bench_search": run_search, "bench_build": run_build, "bench_training": run_training,
         "bench_stream": run_stream, "bench_export": run_export, "bench_report": run_report}

OUTPUTS = {
    "bench_search": {"curves": "search_curves.parquet", "matched": "search_matched.parquet"},
    "bench_build": {"builds": "build.parquet", "beams": "beams.parquet"},
    "bench_training": {"steps": "training_steps.parquet", "reindex": "reindex.parquet",
                       "efficiency": "efficiency.parquet"},
    "bench_stream": {"stream": "stream.parquet"},
    "bench_export": {"curves": "export_curves.parquet", "matched": "export_matched.parquet"},
    "bench_report": {"summary": "summary.md"},
}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("out_dir", type=Path)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    a.out_dir.mkdir(parents=True, exist_ok=True)
    for rule, fn in RULES.items():
        key = rule.removeprefix("bench_")
        s = {**settings(a.quick).get(key, {}), "quick": a.quick}
        fn(s, {k: a.out_dir / v for k, v in OUTPUTS[rule].items()}, a.threads)


if __name__ == "__main__":
    main()
