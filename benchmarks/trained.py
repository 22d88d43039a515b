"""Family 'trained': the indexes the pipeline trained, at equal task quality.

Loads one dataset's pipeline artefacts (``resources/<ds>``): the prepared data, the encoders'
corpus and query embeddings and EHI's trained tree indexes, found in what the folder holds
(:func:`discover`): ``ehi+tree`` from ``main``, ``ehi-warm+tree`` from ``indexer_init~kmeans``,
``ehi-floor+tree`` from the variant whose last part is ``floor~...``, and ``ehi+tree-pq`` (main's
leaves as 4-bit PQ codes, an exact re-rank of 1,000). The peers are the baselines the pipeline
builds, each tuned on the dev queries as the search rule tunes it (:func:`tune_on_dev`): FAISS
IVF-Flat, FAISS HNSW (an efSearch sweep), ScaNN, ScaNN-AH and, compressed, FAISS IVF-PQ, plus an
IVF-Flat with as many lists as ``ehi+tree`` has leaves (``faiss-ivf-L<n>``, untuned: the same
routing and scan cost per list, so its latency ratio isolates the search path from the leaf count). They are
built on DE's embeddings when the run trained DE (``de+``) and otherwise on EHI's own encoder's
(``ehi+``: a frozen-encoder run, where the question is the index alone on the vectors it routes).

Every system is swept over its budget on the test queries; each point gets nDCG@10, Recall@10 and
Recall@100 (the evaluation's ranx metrics, graded judgements), Recall@100 against exact search on
the same encoder and k-NN recall@10 (:mod:`benchmarks.trained_quality`), and, in ``rounds``
interleaved rounds, batched QPS and single-query p50/p99 (:func:`benchmarks.search.time_point`).
A tree is loaded as the search rule loads it (its registry entry's ``from_index``,
:mod:`ehi.search.tree_search`): ``ehi+tree`` is the index folder's FAISS export. Systems are
matched at equal nDCG@10, Recall@10 and k-NN recall@10 (:mod:`benchmarks.trained_report`), and
:mod:`benchmarks.trained_costs` records what each costs to build and hold (and a tree to train).
At scale ``--lists`` sets the peers' list counts (one: built untuned; several: the grid tuned over
on dev, as the pipeline's ``search.ivf_nlist`` / ``scann_leaves`` or the leaf-count rule's grid),
``--hnsw-m`` the graph's degree and ``--max-frac`` where a sweep stops; ``--budget-cost work``
tunes the peers on dev by work, routing counted, as a run with ``search.budget_cost: work`` does.
"""

from __future__ import annotations

import ctypes
import gc
import json
import logging
from pathlib import Path

import numpy as np
import pandas as pd

from ehi.data.dataset import Dataset
from ehi.evaluate.seeds import replica, split_replica
from ehi.evaluate.sweep import split_rows
from ehi.core.plugins import resolve
from ehi.search.registry import ann_kind, build_searcher
from ehi.search.config import SearchConfig
from ehi.search.tune import default_grid, tune_on_dev

from benchmarks import search, systems
from benchmarks import trained_costs as costs
from benchmarks import trained_report as report
from benchmarks.trained_args import check_systems, parser as flags
from benchmarks.trained_quality import K, exact_top, judged_rows, point_quality

log = logging.getLogger(__name__)

TREES = {"ehi+tree": "main", "ehi-warm+tree": "indexer_init~kmeans", "ehi+tree-pq": "main"}
PEER_METHODS = ("faiss-ivf", "faiss-hnsw", "scann", "scann-ah", "faiss-ivfpq")
PEERS = tuple(f"de+{m}" for m in PEER_METHODS)  # of a run that trained DE
PQ = {"nbits": 4, "rerank": 1000}


def tree_variants(resources: Path, seed: int | None = None) -> dict[str, str]:
    """``{tree system: variant}`` of the trained indexes under ``resources`` (``seed``: its
    ``seed~S`` replicas instead of the variants themselves, which hold the run of ``train.seed``)."""
    out = {}
    for index_json in sorted(Path(resources).glob("**/ehi/index/index.json")):
        variant = index_json.parent.parent.parent.relative_to(resources).as_posix()
        base, s = split_replica(variant)
        if s != seed:
            continue
        if base == "main":
            out["ehi+tree"] = out["ehi+tree-pq"] = variant
        elif base == "indexer_init~kmeans":
            out["ehi-warm+tree"] = variant
        elif base.rsplit("/", 1)[-1].startswith("floor~"):
            out.setdefault("ehi-floor+tree", variant)
    return out


def discover(resources: Path, seed: int | None = None, trees: dict | None = None,
             peer_encoder: str | None = None) -> dict[str, Path]:
    """``{system: its model folder (emb/, index/)}``: the trees found (or ``trees``, system ->
    variant) and the peers on ``peer_encoder`` (default: ``de`` when main holds DE embeddings)."""
    resources = Path(resources)
    trees = tree_variants(resources, seed) if trees is None else dict(trees)
    main = "main" if seed is None else replica("main", seed)
    if peer_encoder is None:
        peer_encoder = "de" if (resources / main / "de" / "emb" / "corpus.npy").exists() else "ehi"
    out = {name: resources / variant / "ehi" for name, variant in trees.items()}
    out.update({f"{peer_encoder}+{m}": resources / main / peer_encoder for m in PEER_METHODS})
    index_json = out.get("ehi+tree", Path("-")) / "index" / "index.json"
    if index_json.exists():  # IVF-Flat with the tree's list count: the search path alone, leaf count aside
        n_leaves = json.loads(index_json.read_text())["n_leaves"]
        out[f"{peer_encoder}+faiss-ivf-L{n_leaves}"] = resources / main / peer_encoder
    return out


def _emb(folder: Path) -> tuple[np.ndarray, np.ndarray]:
    """Corpus (memory-mapped: at 10^6 its pages stay evictable file cache, each index holding its
    own copy) and query embeddings, float32."""
    docs = np.load(folder / "corpus.npy", mmap_mode="r")
    return (docs if docs.dtype == np.float32 else docs.astype(np.float32),
            np.load(folder / "queries.npy").astype(np.float32))


def build_systems(resources: Path, folders: dict[str, Path], settings: SearchConfig | None = None,
                  spent: dict | None = None, dataset: Dataset | None = None) -> tuple[dict[str, tuple], list]:
    """``{name: (searcher, corpus embeddings, test query embeddings)}`` of the systems whose
    artefacts exist (a missing one is logged and left out), and the test queries' judgements.
    ``settings`` narrows the peers' dev grids (None: the sqrt(N) rule); ``spent`` collects each
    build's time and memory (:func:`benchmarks.trained_costs.measured`)."""
    dataset = Dataset.read(Path(resources) / "data") if dataset is None else dataset
    test, dev = split_rows(dataset, "test"), split_rows(dataset, "dev")
    out, spent, loaded = {}, {} if spent is None else spent, {}
    for name, folder in folders.items():
        method = report.method(name)
        tree = report.is_tree(name)
        if not (folder / "emb" / "corpus.npy").exists() or (tree and not (folder / "index").exists()):
            log.warning("%s: no artefacts under %s, left out", name, folder)
            continue
        if folder not in loaded:  # the peers share one copy of their vectors (10^6 x 384 is 1.5 GB)
            loaded[folder] = _emb(folder / "emb")
        docs, queries = loaded[folder]
        with costs.measured(spent, name):
            searcher = _build(name, method, folder, docs, queries[dev], settings)
        out[name] = (searcher, docs, queries[test])
    return out, judged_rows(dataset, test)


def _build(name: str, method: str, folder: Path, docs: np.ndarray, dev_queries: np.ndarray,
           settings: SearchConfig | None):
    """One system's searcher: a tree through its FAISS export, a peer dev-tuned as the search rule
    tunes it (a grid of one point is built once, untuned)."""
    same_lists = report.SAME_LISTS.fullmatch(method)
    if same_lists:
        return build_searcher("faiss-ivf", docs, nlist=int(same_lists.group(1)))
    kind = ann_kind(method)
    if kind.from_index:  # a search of the trained index, loaded as the search rule loads it
        codes = SearchConfig(pq_m=docs.shape[1] // 2, pq_nbits=PQ["nbits"], pq_rerank=PQ["rerank"])
        return resolve(kind.from_index)(folder / "index", codes)[2]
    grid = default_grid(method, len(docs), settings)
    if method == "faiss-ivfpq":
        grid = [{**g, "m": docs.shape[1] // 2, **PQ} for g in grid]
    cost = settings.budget_cost if settings else "documents"  # the cost the search rule's tuning reads
    params = grid[0] if len(grid) == 1 else tune_on_dev(method, docs, dev_queries, grid=grid, cost=cost)[0]
    log.info("%s: %s %s", name, "dev-tuned" if len(grid) > 1 else "fixed", params)
    return build_searcher(method, docs, **params)


def _sweep(searcher) -> list[int]:
    return systems.sweep(searcher, K) if searcher.name == "faiss-hnsw" else searcher.default_sweep()


def run(resources: Path, folders: dict[str, Path] | None = None, rounds: int = 3, threads=(1,),
        n_latency: int = 100, seed: int = 0, settings: SearchConfig | None = None, max_frac: float = 1.0,
        spent: dict | None = None, groups: list[list[str]] | None = None) -> pd.DataFrame:
    """One row per (system, budget, thread count of ``threads``): quality on the test queries and
    the timings (medians of rounds; batched QPS with that many threads). A system's sweep stops
    after its first budget scoring more than ``max_frac`` of the corpus.

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
        built, judged = build_systems(resources, {n: folders[n] for n in part}, settings, spent, dataset)
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
    points = {}
    for name, (searcher, docs, queries) in built.items():
        key = (docs.shape, getattr(docs, "filename", None) or id(docs))
        if key not in exacts:  # systems on the same vectors share exact search's answer
            exacts[key] = exact_top(queries, docs)
        exact = exacts[key]
        for budget in _sweep(searcher):
            rows, _, n_scored = searcher.search(queries, K, budget)
            frac = float(n_scored.mean() / len(docs))
            points[name, budget] = {"system": name, "budget_param": searcher.budget_param, "budget_value": budget,
                                    "frac_scored": frac, **point_quality(rows, judged, queries, docs, exact)}
            if frac > max_frac:
                break
        log.info("%s: %d budgets swept", name, sum(1 for n, _ in points if n == name))
    rng = np.random.default_rng(seed)
    threads = (threads,) if isinstance(threads, int) else tuple(threads)
    timings = {}
    for r in range(rounds):  # round r times every point of every system before round r + 1
        for (name, budget) in points:
            searcher, _, queries = built[name]
            lat = queries[rng.choice(len(queries), min(n_latency, len(queries)), replace=False)]
            searcher.search_ids(queries[:8], K, budget)  # warm caches and pools
            for t in threads:
                timings.setdefault((name, budget, t), []).append(
                    search.time_point(searcher, queries, lat, K, budget, t))
        log.info("timing round %d/%d of %s done", r + 1, rounds, ", ".join(built))
    return [{**points[name, budget], **pd.DataFrame(times).median().to_dict(), "rounds": rounds, "threads": t,
             "n_docs": len(built[name][1]), "n_test_queries": len(built[name][2]),
             "n_latency": min(n_latency, len(built[name][2]))}
            for (name, budget, t), times in timings.items()]


def main(argv=None) -> None:
    parser = flags(__doc__.split("\n")[0])
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    trees = dict(args.tree) if args.tree else None
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
    spent = {}
    curves = run(args.resources, folders, args.rounds, args.threads, args.n_latency, settings=settings,
                 max_frac=args.max_frac, spent=spent, groups=args.group)
    trees = {n: f.parent.relative_to(args.resources).as_posix() for n, f in folders.items() if report.is_tree(n)}
    logs = args.logs or Path("logs") / args.resources.name
    cost = costs.cost_table(spent, trees, logs, int(curves.n_docs.iloc[0]))
    seed = "" if args.seed is None else f", seed~{args.seed}"
    note = "\n".join(x for x in (f"Artefacts: `{args.resources}`; {args.rounds} interleaved rounds, "
                                  f"{'/'.join(map(str, args.threads))} thread(s).", args.note) if x)
    report.write_outputs(curves, args.out_dir, f"The trained indexes at equal quality ({args.resources.name}{seed})", note,
                  cost)


if __name__ == "__main__":
    main()
