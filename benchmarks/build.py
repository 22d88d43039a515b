"""Families 2, 5 and 6: build time against N, search cost against N and beam, peak memory.

Each (system, N) runs in its own subprocess (``python -m benchmarks.build child ...``), so its peak
resident set size is its own: the child reads ``ru_maxrss`` (the high-water mark of its RSS) after
making the vectors, after building the index and after searching, and the current RSS from
/proc/self/statm. The parent only collects the child's JSON line. Build times are medians of
``repeats`` builds in the child (the first build's peak memory is the one reported: later builds
reuse freed memory). EHI's "build" is the leaf assignment (one forward pass of the tree) plus
filling the lists; the tree's label-free training is timed apart (``tree_train_seconds``).

For ehi-scan the child also times search over a log grid of beams (family 5): per-query seconds
with all queries batched, against the model cost H*b*B*d' (routing) + n_scored*d (scan).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ehi.search.registry import log_grid

from benchmarks import systems
from benchmarks.data import clustered
from benchmarks.tree import train_tree, tree_shape

PAGE = os.sysconf("SC_PAGE_SIZE")
ROOT = Path(__file__).resolve().parents[1]  # the child imports ``benchmarks`` from here


def _max_rss() -> int:
    """Peak RSS of this process so far, bytes (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * PAGE


def child(name: str, n: int, n_queries: int, repeats: int, threads: int, tree_steps: int, tree_dir: str) -> dict:
    import faiss
    import torch

    from ehi.model.tree import load_indexer

    faiss.omp_set_num_threads(threads)
    torch.set_num_threads(threads)
    docs, queries = clustered(n, n_queries)
    if name == "tree":  # its own process, so its memory does not count as EHI's build
        height, branching = tree_shape(n)
        tree, facts = train_tree(docs, height, branching, steps=tree_steps)
        tree.save(tree_dir)
        return {"tree_train_seconds": facts["train_seconds"], "tree_height": height, "tree_branching": branching,
                "peak_rss_tree": _max_rss()}
    out = {"system": name, "n_docs": n, "dim": docs.shape[1], "raw_bytes": docs.nbytes,
           "rss_data": _rss(), "peak_rss_data": _max_rss(), "threads": threads}
    tree = load_indexer(tree_dir) if name in systems.EHI else None
    seconds = []
    for r in range(repeats):
        searcher, s = systems.build(name, docs, tree)
        seconds.append(s)
        if r == 0:
            out.update(peak_rss_build=_max_rss(), rss_index=_rss())
        if r < repeats - 1:
            del searcher
    out.update(build_seconds=float(np.median(seconds)), build_repeats=repeats)
    budget = systems.mid_budget(searcher)
    start = time.perf_counter()
    _, _, n_scored = searcher.search(queries, 100, budget)
    out.update(search_budget=budget, search_seconds=time.perf_counter() - start,
               search_frac=float(n_scored.mean() / n), peak_rss_search=_max_rss())
    if name == "ehi-scan":
        out["beams"] = beam_costs(searcher, queries, threads)
    return out


def beam_costs(searcher, queries, threads: int, repeats: int = 3, max_frac: float = 0.3,
               n_queries: int = 200) -> list[dict]:
    """Per-query search seconds at each beam of a log grid (up to ``max_frac`` of the corpus
    scored), ``n_queries`` queries batched, median of ``repeats``."""
    rows = []
    queries = queries[:n_queries]
    for beam in log_grid(1, searcher.ivf.nlist, 10):
        aug = searcher.augment(queries)
        leaves, _ = searcher.route(aug, beam)
        n_scored = float(searcher.list_sizes[leaves].sum(axis=1).mean())
        if rows and n_scored > max_frac * searcher.n_docs:
            break
        searcher.set_threads(threads)
        route, total = [], []
        for _ in range(repeats):
            t0 = time.perf_counter()
            searcher.route(searcher.augment(queries), beam)
            t1 = time.perf_counter()
            searcher.search_ids(queries, 100, beam)
            t2 = time.perf_counter()
            route.append((t1 - t0) / len(queries))
            total.append((t2 - t1) / len(queries))
        rows.append({"beam": beam, "n_scored": n_scored, "route_seconds": float(np.median(route)),
                     "seconds_per_query": float(np.median(total))})
    return rows


def run(sizes, names=("ehi-scan",) + systems.PEERS, n_queries: int = 500, threads: int = 2,
        repeats_small: int = 3, tree_steps: int = 200, big: int = 1_000_000) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(builds: one row per (system, N); beams: ehi-scan's search cost per (N, beam))."""
    builds, beams = [], []
    for n in sizes:
        with tempfile.TemporaryDirectory() as tree_dir:
            tree = _child("tree", n, n_queries, 1, threads, tree_steps, tree_dir)
            for name in names:
                repeats = 1 if n >= big else repeats_small
                rec = _child(name, n, n_queries, repeats, threads, tree_steps, tree_dir)
                if name in systems.EHI:
                    rec.update(tree)
                builds.append(rec)
                for b in rec.pop("beams", []):
                    beams.append({"n_docs": n, "dim": rec["dim"], "height": rec["tree_height"],
                                  "branching": rec["tree_branching"], **b})
                print(f"build {name} N={n}: {rec['build_seconds']:.2f} s, peak {rec['peak_rss_search'] / 2**20:.0f} MiB",
                      file=sys.stderr, flush=True)
    builds = pd.DataFrame(builds)
    for col in ("peak_rss_build", "peak_rss_search", "rss_index"):
        builds[f"{col}_over_raw"] = builds[col] / builds.raw_bytes
    builds["index_over_raw"] = (builds.rss_index - builds.rss_data) / builds.raw_bytes
    ehi = builds[builds.system == "ehi-scan"].set_index("n_docs").build_seconds
    builds["ehi_build_ratio"] = builds.n_docs.map(ehi) / builds.build_seconds
    return builds, pd.DataFrame(beams)


def _child(name, n, n_queries, repeats, threads, tree_steps, tree_dir) -> dict:
    cmd = [sys.executable, "-m", "benchmarks.build", "child", name, *map(str, (n, n_queries, repeats, threads,
                                                                               tree_steps)), tree_dir]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=ROOT)
    if res.returncode != 0:
        raise RuntimeError(f"benchmark child {name} N={n} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def fit_cost(beams: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """Least-squares fit of seconds/query = c0 + c1 * H*b*B*d' + c2 * n_scored*d (non-negative
    coefficients) over every (N, beam); adds the model's prediction and the measured/model ratio."""
    from scipy.optimize import nnls

    route = beams.height * beams.beam * beams.branching * beams.dim  # d' = d (hidden = dim)
    scan = beams.n_scored * beams.dim
    design = np.stack([np.ones(len(beams)), route, scan], axis=1)
    y = beams.seconds_per_query.to_numpy()
    weights = 1 / y  # relative error: every point counts, not only the slowest
    coef, _ = nnls(design * weights[:, None], y * weights)
    beams = beams.assign(model_seconds=design @ coef)
    beams["measured_over_model"] = beams.seconds_per_query / beams.model_seconds
    return beams, {"c0_seconds": coef[0], "c_route_seconds_per_flop": coef[1], "c_scan_seconds_per_flop": coef[2]}


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "child":
    p = argparse.ArgumentParser()
    p.add_argument("mode")
    p.add_argument("name")
    for arg in ("n", "n_queries", "repeats", "threads", "tree_steps"):
        p.add_argument(arg, type=int)
    p.add_argument("tree_dir")
    a = p.parse_args()
    print(json.dumps(child(a.name, a.n, a.n_queries, a.repeats, a.threads, a.tree_steps, a.tree_dir)))
