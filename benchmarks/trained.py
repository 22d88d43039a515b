"""Family 'trained': the indexes the pipeline trained, at equal task quality.

Loads one dataset's pipeline artefacts (``resources/<ds>``): the prepared data, the DE and EHI
encoders' corpus and query embeddings, EHI's trained tree indexes (``ehi+tree`` from ``main``,
``ehi-warm+tree`` from the k-means-initialised variant) and builds the baselines the pipeline
builds on DE's embeddings, each tuned on the dev queries as the search rule tunes it
(:func:`ehi.search.tune.tune_on_dev`): FAISS IVF-Flat, FAISS HNSW (an efSearch sweep), ScaNN,
ScaNN-AH; compressed: EHI's leaves as 4-bit PQ codes with an exact re-rank of 1,000
(``ehi+tree-pq``) against FAISS IVF-PQ and ScaNN-AH. Every system is swept over its budget on
the test queries; each point gets nDCG@10 and Recall@100 (the evaluation's ranx metrics, graded
judgements), Recall@100 against exact search on the same encoder, and, in ``rounds`` interleaved
rounds, batched QPS and single-query p50/p99 (:func:`benchmarks.search.time_point`).

:func:`matched` reads every EHI system against every peer at equal nDCG@10: the fastest measured
point reaching each target, the targets being fractions of the lower of the two systems' best
nDCG@10 (so both reach them). No interpolation: a ratio compares two measured points.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from ehi.data.dataset import Dataset
from ehi.evaluate.metrics import ranked_rows_metrics
from ehi.evaluate.sweep import split_rows
from ehi.search.registry import build_searcher
from ehi.search.tree_index import EHIIndex
from ehi.search.tune import default_grid, neighbor_recall, tune_on_dev

from benchmarks import search, systems

log = logging.getLogger(__name__)

TREES = {"ehi+tree": "main", "ehi-warm+tree": "indexer_init~kmeans", "ehi+tree-pq": "main"}
PEERS = ("de+faiss-ivf", "de+faiss-hnsw", "de+scann", "de+scann-ah", "de+faiss-ivfpq")
COMPRESSED = ("ehi+tree-pq", "de+faiss-ivfpq", "de+scann-ah")  # compared with each other
PQ = {"nbits": 4, "rerank": 1000}
TARGETS = (0.90, 0.95, 0.99)  # of the lower of the two systems' best nDCG@10
K = 100


def _emb(folder: Path) -> tuple[np.ndarray, np.ndarray]:
    return (np.load(folder / "corpus.npy").astype(np.float32), np.load(folder / "queries.npy").astype(np.float32))


def judged_rows(dataset: Dataset, rows: np.ndarray) -> list[dict[int, int]]:
    """Each query's (at ``rows`` of queries.parquet) judgements as ``{doc row: grade}``."""
    doc_row = pd.Series(np.arange(len(dataset.corpus)), index=dataset.corpus.doc_id.astype(str))
    qids = dataset.queries.query_id.astype(str).to_numpy()[rows]
    qrels = dataset.qrels[dataset.qrels.query_id.astype(str).isin(set(qids))]
    by_query = {q: {} for q in qids}
    for q, d, g in zip(qrels.query_id.astype(str), qrels.doc_id.astype(str), qrels.relevance):
        by_query[q][int(doc_row[d])] = int(g)
    return [by_query[q] for q in qids]


def build_systems(resources: Path, names) -> dict[str, tuple]:
    """``{name: (searcher, corpus embeddings, test query embeddings)}`` of the systems whose
    artefacts exist (a missing one is logged and left out)."""
    resources = Path(resources)
    dataset = Dataset.read(resources / "data")
    test, dev = split_rows(dataset, "test"), split_rows(dataset, "dev")
    out = {}
    for name in names:
        method = name.split("+", 1)[1]
        folder = resources / (TREES[name] if name in TREES else "main") / ("ehi" if name in TREES else "de")
        if not (folder / "emb" / "corpus.npy").exists() or (name in TREES and not (folder / "index").exists()):
            log.warning("%s: no artefacts under %s, left out", name, folder)
            continue
        docs, queries = _emb(folder / "emb")
        if name in TREES:
            pq = {"pq_m": docs.shape[1] // 2, **PQ} if method == "tree-pq" else {}
            searcher = EHIIndex.load(folder / "index").searcher(**pq)
        else:
            grid = default_grid(method, len(docs))
            if method == "faiss-ivfpq":
                grid = [{**g, "m": docs.shape[1] // 2, **PQ} for g in grid]
            params, _ = tune_on_dev(method, docs, queries[dev], grid=grid)
            searcher = build_searcher(method, docs, **params)
        out[name] = (searcher, docs, queries[test])
    return out, judged_rows(dataset, test)


def _sweep(searcher) -> list[int]:
    return systems.sweep(searcher, K) if searcher.name == "faiss-hnsw" else searcher.default_sweep()


def run(resources: Path, names=tuple(TREES) + PEERS, rounds: int = 3, threads: int = 1,
        n_latency: int = 100, seed: int = 0) -> pd.DataFrame:
    """One row per (system, budget): quality on the test queries and the timings (medians of rounds)."""
    built, judged = build_systems(resources, names)
    points = {}
    for name, (searcher, docs, queries) in built.items():
        exact = np.argsort(-(queries @ docs.T), axis=1, kind="stable")[:, :K]
        for budget in _sweep(searcher):
            rows, _, n_scored = searcher.search(queries, K, budget)
            points[name, budget] = {"system": name, "budget_param": searcher.budget_param, "budget_value": budget,
                                    "frac_scored": float(n_scored.mean() / len(docs)),
                                    **ranked_rows_metrics(rows, judged, ("ndcg@10", "recall@100")),
                                    "exact_recall@100": float(neighbor_recall(rows, exact).mean())}
    rng = np.random.default_rng(seed)
    timings = {}
    for _ in range(rounds):  # round r times every point of every system before round r + 1
        for (name, budget) in points:
            searcher, _, queries = built[name]
            lat = queries[rng.choice(len(queries), min(n_latency, len(queries)), replace=False)]
            searcher.search_ids(queries[:8], K, budget)  # warm caches and pools
            timings.setdefault((name, budget), []).append(search.time_point(searcher, queries, lat, K, budget, threads))
    rows = [{**p, **pd.DataFrame(timings[key]).median().to_dict(), "rounds": rounds, "threads": threads}
            for key, p in points.items()]
    return pd.DataFrame(rows)


def fastest_reaching(curve: pd.DataFrame, target: float) -> pd.Series | None:
    """The measured point of highest QPS whose nDCG@10 reaches ``target`` (None if none does)."""
    ok = curve[curve["ndcg@10"] >= target - 1e-12]
    return None if ok.empty else ok.loc[ok.qps.idxmax()]


def matched(curves: pd.DataFrame, targets=TARGETS) -> pd.DataFrame:
    """EHI system / peer at equal nDCG@10: QPS and p50/p99 ratios at each target (long format)."""
    out = []
    by = dict(tuple(curves.groupby("system", sort=False)))
    for ehi in [s for s in by if s.startswith("ehi")]:
        peers = [p for p in by if not p.startswith("ehi")]
        peers = [p for p in peers if (p in COMPRESSED) == (ehi in COMPRESSED) or p == "de+scann-ah"]
        for peer in peers:
            ceiling = min(by[ehi]["ndcg@10"].max(), by[peer]["ndcg@10"].max())
            for f in targets:
                e, p = fastest_reaching(by[ehi], f * ceiling), fastest_reaching(by[peer], f * ceiling)
                out.append({"ehi": ehi, "peer": peer, "target_share": f, "ndcg@10": f * ceiling,
                            "ehi_qps": e.qps, "peer_qps": p.qps, "qps_ratio": e.qps / p.qps,
                            "p50_ratio": e.p50_ms / p.p50_ms, "p99_ratio": e.p99_ms / p.p99_ms,
                            "ehi_frac": e.frac_scored, "peer_frac": p.frac_scored})
    return pd.DataFrame(out)


def pareto_figure(curves: pd.DataFrame, path: Path) -> Path:
    """QPS (log) against nDCG@10, one line per system through its Pareto-optimal points."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, curve in curves.groupby("system", sort=False):
        curve = curve.sort_values(["ndcg@10", "qps"], ascending=False)  # of equal quality the fastest first
        front = curve[curve.qps >= curve.qps.cummax()].drop_duplicates("ndcg@10").sort_values("ndcg@10")
        ax.plot(front["ndcg@10"], front.qps, marker="o", ms=3, lw=2.5 if name.startswith("ehi") else 1.2,
                label=name, zorder=3 if name.startswith("ehi") else 2)
    ax.set_yscale("log")
    ax.set_xlabel("nDCG@10 (test queries)")
    ax.set_ylabel(f"queries per second ({int(curves.threads.iloc[0])} thread(s), batched)")
    ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return Path(path)


def ratio_markdown(table: pd.DataFrame) -> str:
    """The ratio table at equal nDCG@10, one row per (EHI system, peer, target)."""
    shown = table.assign(**{c: table[c].map(lambda v: f"{v:.2f}") for c in ("qps_ratio", "p50_ratio", "p99_ratio")})
    shown["ndcg@10"] = shown["ndcg@10"].map(lambda v: f"{v:.3f}")
    cols = ["ehi", "peer", "target_share", "ndcg@10", "qps_ratio", "p50_ratio", "p99_ratio"]
    return shown[cols].to_markdown(index=False)


def main(argv=None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("resources", type=Path, help="resources/<dataset> of a finished pipeline run")
    parser.add_argument("out_dir", type=Path, help="writes trained_curves/_matched.parquet, trained_pareto.png, trained.md")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--n-latency", type=int, default=100)
    parser.add_argument("--systems", nargs="*", default=list(TREES) + list(PEERS))
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    curves = run(args.resources, args.systems, args.rounds, args.threads, args.n_latency)
    table = matched(curves)
    curves.to_parquet(args.out_dir / "trained_curves.parquet", index=False)
    table.to_parquet(args.out_dir / "trained_matched.parquet", index=False)
    pareto_figure(curves, args.out_dir / "trained_pareto.png")
    (args.out_dir / "trained.md").write_text(
        f"# The trained indexes at equal nDCG@10 ({args.resources})\n\n" + ratio_markdown(table) + "\n")


if __name__ == "__main__":
    main()
