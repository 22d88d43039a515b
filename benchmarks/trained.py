"""Family 'trained': the indexes the pipeline trained, at equal task quality.

Loads one dataset's pipeline artefacts (``resources/<ds>``): the prepared data, the encoders'
corpus and query embeddings and EHI's trained tree indexes, and builds the systems
(:mod:`benchmarks.trained_builds`): ``ehi+tree`` from ``main``, ``ehi-warm+tree`` from
``indexer_init~kmeans``, any other setting's tree named with ``--tree NAME=VARIANT`` (the rule names
the floor recipe's by its ablation row), and
``ehi+tree-pq`` (main's leaves as 4-bit PQ codes, an exact re-rank of 1,000), against the baselines
the pipeline builds: FAISS IVF-Flat, FAISS HNSW (an efSearch sweep), ScaNN, ScaNN-AH and,
compressed, FAISS IVF-PQ fast scan with the same re-rank, plus the tree's controls with its leaf
count (``faiss-ivf-L<n>``, ``ivf-lists-pq``). They are built on DE's embeddings when the run
trained DE (``de+``) and otherwise on EHI's own encoder's (``ehi+``: a frozen-encoder run, where the
question is the index alone on the vectors it routes). Each peer is tuned on the dev queries as
the search rule tunes it, or with ``--every-build`` measured at every point of its grid (HNSW's M,
ScaNN's leaves and reordering, IVF's list counts), one curve over all its builds.

Every system is swept over its budget on the test queries; each point gets nDCG@10, Recall@10 and
Recall@100 (the evaluation's ranx metrics, graded judgements), Recall@100 against exact search on
the same encoder and k-NN recall@10 (:mod:`benchmarks.trained_quality`), and, in ``rounds``
interleaved rounds, batched QPS and single-query p50/p99 (:func:`benchmarks.search.time_point`).
Systems are matched at equal nDCG@10, Recall@10 and k-NN recall@10 (:mod:`benchmarks.trained_report`),
and :mod:`benchmarks.trained_costs` records what each build costs to make, hold and store (and a
tree to train). The report names the machine and its load (:func:`machine`).
At scale ``--lists`` sets the peers' list counts (one: built untuned; several: the grid tuned over
on dev, as the pipeline's ``search.ivf_nlist`` / ``scann_leaves`` or the leaf-count rule's grid),
``--hnsw-m`` the graph's degrees and ``--max-frac`` where a sweep stops; ``--budget-cost work``
tunes the peers on dev by work, routing counted, as a run with ``search.budget_cost: work`` does.
"""

from __future__ import annotations

import ctypes
import gc
import logging
import os
import platform
from pathlib import Path

import numpy as np
import pandas as pd

from ehi.core.kernels import cpu_model
from ehi.data.dataset import Dataset
from ehi.search.config import SearchConfig

from benchmarks import search, systems
from benchmarks import trained_costs as costs
from benchmarks import trained_report as report
from benchmarks.trained_args import check_systems, parser as flags
from benchmarks.trained_builds import build_systems, discover, tree_variants
from benchmarks.trained_quality import K, exact_top, point_quality

log = logging.getLogger(__name__)


def machine() -> str:
    """The machine in words, as the report names it: CPU model, cores, system and the load average
    when the run starts (what else is running shows there)."""
    model = cpu_model()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "unknown"
    return f"Machine: {model}, {os.cpu_count()} logical cores, {platform.system()} {platform.machine()}; load average {load} at the start."


def _sweep(searcher) -> list[int]:
    return systems.sweep(searcher, K) if searcher.name == "faiss-hnsw" else searcher.default_sweep()


def run(resources: Path, folders: dict[str, Path] | None = None, rounds: int = 3, threads=(1,),
        n_latency: int = 100, seed: int = 0, settings: SearchConfig | None = None, max_frac: float = 1.0,
        spent: dict | None = None, groups: list[list[str]] | None = None, every_build: bool = False) -> pd.DataFrame:
    """One row per (system, build, budget, thread count of ``threads``): quality on the test queries
    and the timings (medians of rounds; batched QPS with that many threads). A build's sweep stops
    after its first budget scoring more than ``max_frac`` of the corpus. ``every_build``: each peer
    at every point of its grid (column ``build``: its parameters), not the dev-tuned one.

    ``groups`` (lists of system names; the systems in none form one more group) are built, swept,
    timed and freed one after another, so that only one group's indexes are held at once: at 10^6
    eight indexes of 1.5 GB each and their builds do not fit in 24 GB together. Rounds interleave the
    points of one group; the groups are timed one after another."""
    folders = discover(resources) if folders is None else folders
    named = {n for g in groups or [] for n in g}
    parts = [[n for n in g if n in folders] for g in groups or []] + [[n for n in folders if n not in named]]
    dataset = Dataset.read(Path(resources) / "data")
    exacts, rows = {}, []
    for part in (p for p in parts if p):
        built, judged = build_systems(resources, {n: folders[n] for n in part}, settings, spent, dataset, every_build)
        rows += _measure(built, judged, exacts, rounds, threads, n_latency, seed, max_frac)
        del built
        gc.collect()
        _return_freed_heap()
    return pd.DataFrame(rows)


def _return_freed_heap() -> None:
    """Give the freed group's heap back to the OS (glibc's malloc_trim), so the next group's builds
    grow the resident set rather than reuse it and the memory its indexes hold is still measured
    (an index of many list-sized allocations, FAISS's and ScaNN's, lives on the heap)."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: the next group's memory may read low
        pass


def _measure(built: dict, judged: list, exacts: dict, rounds: int, threads, n_latency: int, seed: int,
             max_frac: float) -> list[dict]:
    """The quality sweep and the interleaved timing rounds of one group of built systems."""
    points, searchers = {}, {}
    for name, (builds, docs, queries) in built.items():
        key = (docs.shape, getattr(docs, "filename", None) or id(docs))
        if key not in exacts:  # systems on the same vectors share exact search's answer
            exacts[key] = exact_top(queries, docs)
        for label, searcher in builds:
            searchers[name, label] = searcher
            points.update(_sweep_points(name, label, searcher, docs, queries, judged, exacts[key], max_frac))
        log.info("%s: %d budgets swept over %d build(s)", name, sum(1 for n, *_ in points if n == name), len(builds))
    report.check_quality(pd.DataFrame(points.values()))  # before the timing rounds, the benchmark's hours
    rng = np.random.default_rng(seed)
    threads = (threads,) if isinstance(threads, int) else tuple(threads)
    timings = {}
    for r in range(rounds):  # round r times every point of every system before round r + 1
        for (name, label, budget) in points:
            searcher, queries = searchers[name, label], built[name][2]
            lat = queries[rng.choice(len(queries), min(n_latency, len(queries)), replace=False)]
            searcher.search_ids(queries[:8], K, budget)  # warm caches and pools
            for t in threads:
                timings.setdefault((name, label, budget, t), []).append(
                    search.time_point(searcher, queries, lat, K, budget, t))
        log.info("timing round %d/%d of %s done", r + 1, rounds, ", ".join(built))
    return [{**points[name, label, budget], **_over_rounds(pd.DataFrame(times)), "rounds": rounds, "threads": t,
             "n_docs": len(built[name][1]), "n_test_queries": len(built[name][2]),
             "n_latency": min(n_latency, len(built[name][2]))}
            for (name, label, budget, t), times in timings.items()]


def _over_rounds(times: pd.DataFrame) -> dict:
    """A point's timings: the medians of its rounds, and the slowest and fastest round's QPS (the
    spread that says whether a ratio near 1.0 is more than timing noise)."""
    return {**times.median().to_dict(), "qps_min": float(times.qps.min()), "qps_max": float(times.qps.max())}


def _sweep_points(name: str, label: str, searcher, docs, queries, judged, exact, max_frac: float) -> dict:
    """{(name, build, budget): the point's quality} of one build's sweep, cut past ``max_frac``."""
    points = {}
    for budget in _sweep(searcher):
        rows, _, n_scored = searcher.search(queries, K, budget)
        frac = float(n_scored.mean() / len(docs))
        points[name, label, budget] = {"system": name, "build": label, "budget_param": searcher.budget_param,
                                       "budget_value": budget, "frac_scored": frac,
                                       **point_quality(rows, judged, queries, docs, exact)}
        if frac > max_frac:
            break
    return points


def main(argv=None) -> None:
    parser = flags(__doc__.split("\n")[0])
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    trees = dict(args.tree) if args.tree else tree_variants(args.resources, args.seed)
    folders = discover(args.resources, args.seed, trees, args.peer_encoder) if args.resources.is_dir() else {}
    check_systems(parser, args, folders)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    if args.systems:
        folders = {n: f for n, f in folders.items() if n in args.systems}
    log.info("systems: %s", {n: str(f) for n, f in folders.items()})
    settings = None
    if args.lists or args.hnsw_m or args.hnsw_ef_construction or args.budget_cost:
        hnsw = {"hnsw_ef_construction": args.hnsw_ef_construction} if args.hnsw_ef_construction else {}
        settings = SearchConfig(ivf_nlist=args.lists, scann_leaves=args.lists, hnsw_M=args.hnsw_m or [16, 32],
                                budget_cost=args.budget_cost or "documents", **hnsw)
    spent, start = {}, machine()
    curves = run(args.resources, folders, args.rounds, args.threads, args.n_latency, settings=settings,
                 max_frac=args.max_frac, spent=spent, groups=args.group, every_build=args.every_build)
    trees = {n: variant for n, variant in trees.items() if n in folders and report.is_tree(n)}
    logs = args.logs or Path("logs") / args.resources.name
    cost = costs.cost_table(spent, trees, logs, int(curves.n_docs.iloc[0]))
    seed = "" if args.seed is None else f", seed~{args.seed}"
    builds = "every build of each peer's grid" if args.every_build else "each peer tuned on dev"
    note = "\n".join(x for x in (f"Artefacts: `{args.resources}`; {args.rounds} interleaved rounds, "
                                  f"{'/'.join(map(str, args.threads))} thread(s); {builds}.", start, args.note) if x)
    report.write_outputs(curves, args.out_dir, f"The trained indexes at equal quality ({args.resources.name}{seed})", note,
                  cost)


if __name__ == "__main__":
    main()
