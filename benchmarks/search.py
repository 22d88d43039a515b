"""Family 1: search at matched quality on the same embeddings (QPS, latency p50/p99, recall).

Per dataset: exact top-k (FAISS flat) is the reference; every system sweeps its budget from cheap
to the first point whose Recall@k relative to exact reaches ``stop_recall`` and whose fraction
scored reaches the largest fraction target (or, before that, ``max_frac`` of the corpus scored). Each sweep point is then timed in ``rounds`` interleaved rounds (round r times
every system's every point before round r+1 starts, so a slow minute of the shared machine hits
all systems alike): batched QPS over all queries with ``threads`` threads, and the latency of
single-query calls with one thread. Reported values are medians over the rounds.

:func:`matched` reads the curves at equal recall and at equal fraction scored (log-linear
interpolation between the two measured points around the target, never extrapolated) and gives
the EHI/peer ratios.
"""

from __future__ import annotations

import logging
import time

import numpy as np
import pandas as pd

from ehi.search.registry import FlatSearcher
from ehi.search.tune import neighbor_recall

from benchmarks import systems
from benchmarks.tree import train_tree, tree_shape

log = logging.getLogger(__name__)

RECALL_TARGETS = (0.90, 0.95, 0.99)
FRAC_TARGETS = (0.01, 0.02, 0.05, 0.10)


def set_threads(threads: int) -> None:
    import faiss
    import torch

    faiss.omp_set_num_threads(int(threads))
    torch.set_num_threads(int(threads))


def recall_curve(searcher, queries, truth, k, stop_recall, max_frac) -> list[dict]:
    points = []
    for budget in systems.sweep(searcher, k):
        rows, _, n_scored = searcher.search(queries, k, budget)
        rec = float(neighbor_recall(rows, truth).mean())
        frac = float(n_scored.mean() / searcher.n_docs)
        points.append({"budget_param": searcher.budget_param, "budget_value": budget,
                       "recall": rec, "frac_scored": frac})
        # go on until both the recall and the fraction targets are covered (or the cap is hit)
        if (rec >= stop_recall and frac >= max(FRAC_TARGETS)) or frac >= max_frac:
            break
    return points


def time_point(searcher, queries, lat_queries, k, budget, threads) -> dict:
    """One round at one budget: batched QPS (``threads``) and single-query latencies (1 thread)."""
    set_threads(threads)
    searcher.set_threads(threads)
    start = time.perf_counter()
    searcher.search_ids(queries, k, budget)
    qps = len(queries) / (time.perf_counter() - start)
    set_threads(1)
    searcher.set_threads(1)
    lat = np.empty(len(lat_queries))
    for i in range(len(lat_queries)):
        t = time.perf_counter()
        searcher.search_ids(lat_queries[i : i + 1], k, budget)
        lat[i] = time.perf_counter() - t
    return {"qps": qps, "p50_ms": 1e3 * np.percentile(lat, 50), "p99_ms": 1e3 * np.percentile(lat, 99)}


def run(dataset: str, docs: np.ndarray, queries: np.ndarray, names=systems.EHI + systems.PEERS, k: int = 100,
        rounds: int = 3, threads: int = 2, n_latency: int = 100, stop_recall: float = 0.995,
        max_frac: float | None = None, tree_steps: int = 200, seed: int = 0, height: int = 2,
        build=systems.build) -> pd.DataFrame:
    """The measured curves: one row per (system, budget) with recall, fraction scored and timings.
    ``height``: of the trained tree (B^H about sqrt(N) leaves); ``build(name, docs, tree)`` makes each system."""
    set_threads(threads)
    if max_frac is None:  # small corpora are cheap to sweep far; at 10^6 a 25% scan is already slow
        max_frac = 0.6 if len(docs) <= 20_000 else 0.25
    truth = FlatSearcher.build(docs).search_ids(queries, k)[0]
    height, branching = tree_shape(len(docs), height)
    tree, facts = train_tree(docs, height, branching, steps=tree_steps, seed=seed)
    log.info("%s: tree %s", dataset, facts)
    built, frames = {}, []
    for name in names:
        searcher, seconds = build(name, docs, tree)
        points = recall_curve(searcher, queries, truth, k, stop_recall, max_frac)
        built[name] = (searcher, points)
        log.info("%s %s: built in %.1f s, %d sweep points", dataset, name, seconds, len(points))
    lat_queries = queries[np.random.default_rng(seed).choice(len(queries), min(n_latency, len(queries)), replace=False)]
    timings = {}
    for r in range(rounds):
        for name, (searcher, points) in built.items():
            for p in points:
                searcher.search_ids(queries[:8], k, p["budget_value"])  # warm caches and pools
                timings.setdefault((name, p["budget_value"]), []).append(
                    time_point(searcher, queries, lat_queries, k, p["budget_value"], threads))
        log.info("%s: timing round %d/%d done", dataset, r + 1, rounds)
    for name, (searcher, points) in built.items():
        for p in points:
            t = pd.DataFrame(timings[(name, p["budget_value"])]).median()
            frames.append({"dataset": dataset, "n_docs": len(docs), "n_queries": len(queries), "system": name,
                           **p, **t.to_dict(), "rounds": rounds, "threads": threads, "k": k,
                           "tree_height": height, "tree_branching": branching,
                           "tree_train_seconds": facts["train_seconds"], "tree_train_steps": tree_steps,
                           "max_leaf_over_mean": (float(searcher.list_sizes.max() / searcher.list_sizes.mean())
                                                  if name == "ehi-scan" else np.nan)})
    return pd.DataFrame(frames)


def _interp(curve: pd.DataFrame, x: str, target: float, cols, log_x: bool = False) -> dict:
    """Values of ``cols`` at ``x == target``, log-linear between the two bracketing points.

    Below the curve's first point the first point itself counts when it already reaches the
    target for recall (a cheaper budget does not exist in the sweep); otherwise NaN."""
    curve = curve.sort_values(x)
    xs = curve[x].to_numpy()
    out = {c: np.nan for c in cols}
    if len(xs) == 0 or target > xs.max():
        return out
    if target <= xs.min():
        if x == "recall":
            return {c: float(curve[c].iloc[0]) for c in cols}
        return out if target < xs.min() else {c: float(curve[c].iloc[0]) for c in cols}
    j = int(np.searchsorted(xs, target))
    x0, x1 = xs[j - 1], xs[j]
    tx = (np.log(target) - np.log(x0)) / (np.log(x1) - np.log(x0)) if log_x else (target - x0) / (x1 - x0)
    for c in cols:
        y0, y1 = curve[c].iloc[j - 1], curve[c].iloc[j]
        out[c] = float(np.exp(np.log(y0) + tx * (np.log(y1) - np.log(y0)))) if y0 > 0 and y1 > 0 else np.nan
    return out


def _monotone(curve: pd.DataFrame) -> pd.DataFrame:
    """Keep the points where recall rises (a sweep can dip by noise; interpolation needs order)."""
    curve = curve.sort_values("frac_scored")
    return curve[curve.recall >= curve.recall.cummax() - 1e-12]


def matched(curves: pd.DataFrame, ehi: str = "ehi-scan") -> pd.DataFrame:
    """One row per (dataset, comparison, target, system): the values at that recall or fraction
    scored, and the ratio EHI/system of each. ``best-peer`` is the peer with the highest QPS."""
    rows = []
    cols = ["qps", "p50_ms", "p99_ms", "frac_scored", "recall"]
    for dataset, data in curves.groupby("dataset", sort=False):
        for kind, targets in (("recall", RECALL_TARGETS), ("frac_scored", FRAC_TARGETS)):
            for target in targets:
                values = {}
                for name, curve in data.groupby("system", sort=False):
                    curve = _monotone(curve)
                    if kind == "recall":
                        values[name] = _interp(curve, "recall", target, cols)
                    else:  # QPS and recall against log(fraction)
                        values[name] = _interp(curve, "frac_scored", target, cols, log_x=True)
                peers = {n: v for n, v in values.items() if n in systems.PEERS and np.isfinite(v["qps"])}
                if peers:
                    best = max(peers, key=lambda n: peers[n]["qps"])
                    values["best-peer"] = {**peers[best], "best_peer": best}
                for name, v in values.items():
                    e = values.get(ehi, {})
                    rows.append({"dataset": dataset, "matched_at": kind, "target": target, "system": name,
                                 "best_peer": v.get("best_peer", ""), **{c: v[c] for c in cols},
                                 "qps_ratio": e.get("qps", np.nan) / v["qps"],
                                 "p50_ratio": e.get("p50_ms", np.nan) / v["p50_ms"],
                                 "p99_ratio": e.get("p99_ms", np.nan) / v["p99_ms"]})
    return pd.DataFrame(rows)
