"""The systems of the trained-index benchmark (:mod:`benchmarks.trained`): which there are in a
pipeline run's artefacts (:func:`discover`) and how each is built (:func:`build_systems`).

A tree is loaded as the search rule loads it (its registry entry's ``from_index``,
:mod:`ehi.search.tree_search`): ``ehi+tree`` is the index folder's FAISS export, ``ehi+tree-pq``
its leaves as 4-bit fast-scan PQ codes re-ranked exactly (:data:`PQ`). Two controls have the tree's
leaf count: ``faiss-ivf-L<n>`` (IVF-Flat with as many lists, untuned: the same routing and scan
cost per list) and ``ivf-lists-pq`` (k-means lists coded and re-ranked as ``tree-pq``: the
compressed pair then differs in the partition alone). Every other peer is built as the search rule
builds it, tuned on the dev queries (:func:`ehi.search.tune.tune_on_dev`), or with ``every_build``
at each point of its grid (HNSW's degrees, ScaNN's leaves and reordering, IVF's and IVF-PQ's list
counts), each build a part of one curve, as ann-benchmarks draws an algorithm over its parameters.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np

from ehi.core.plugins import resolve
from ehi.data.dataset import Dataset
from ehi.evaluate.seeds import replica
from ehi.evaluate.sweep import split_rows
from ehi.search.config import SearchConfig
from ehi.search.registry import ann_kind, build_searcher
from ehi.search.tune import default_grid, tune_on_dev

from benchmarks import trained_costs as costs
from benchmarks import trained_report as report
from benchmarks.trained_quality import judged_rows

log = logging.getLogger(__name__)

TREES = {"ehi+tree": "main", "ehi-warm+tree": "indexer_init~kmeans", "ehi+tree-pq": "main"}
PEER_METHODS = ("faiss-ivf", "faiss-hnsw", "scann", "scann-ah", "faiss-ivfpq")
PEERS = tuple(f"de+{m}" for m in PEER_METHODS)  # of a run that trained DE
PQ = {"nbits": 4, "rerank": 1000}  # the compressed systems' codes: 4-bit fast scan, 1,000 re-ranked


def tree_variants(resources: Path, seed: int | None = None) -> dict[str, str]:
    """``{tree system: variant}`` of :data:`TREES` whose trained index is under ``resources``
    (``seed``: its ``seed~S`` replicas instead of the variants themselves, which hold the run of
    ``train.seed``). Any other setting's tree is named with its variant (``--tree``, the rule's
    ablation rows): a tree is found by the variant it is asked for, never by reading folder names."""
    out = {}
    for name, variant in TREES.items():
        asked = variant if seed is None else replica(variant, seed)
        if (Path(resources) / asked / "ehi" / "index" / "index.json").exists():
            out[name] = asked
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
    n_leaves = _tree_leaves(out)
    if n_leaves:  # the controls with the tree's list count: the partition alone, leaf count aside
        out[f"{peer_encoder}+faiss-ivf-L{n_leaves}"] = resources / main / peer_encoder
        if any(report.method(name) == "tree-pq" for name in trees):
            out[f"{peer_encoder}+ivf-lists-pq"] = resources / main / peer_encoder
    return out


def _emb(folder: Path) -> tuple[np.ndarray, np.ndarray]:
    """Corpus (memory-mapped: at 10^6 its pages stay evictable file cache, each index holding its
    own copy) and query embeddings, float32."""
    docs = np.load(folder / "corpus.npy", mmap_mode="r")
    return (docs if docs.dtype == np.float32 else docs.astype(np.float32),
            np.load(folder / "queries.npy").astype(np.float32))


def _first_tree_index(folders: dict[str, Path]) -> Path | None:
    """index.json of the first tree among ``folders`` (the controls take its leaf count): any
    tree, not only ``ehi+tree``, so that a run timing another setting's tree gets its controls."""
    for name, folder in folders.items():
        index_json = folder / "index" / "index.json"
        if report.is_tree(name) and index_json.exists():
            return index_json
    return None


def _tree_leaves(folders: dict[str, Path]) -> int | None:
    index_json = _first_tree_index(folders)
    return json.loads(index_json.read_text())["n_leaves"] if index_json else None


def build_systems(resources: Path, folders: dict[str, Path], settings: SearchConfig | None = None,
                  spent: dict | None = None, dataset: Dataset | None = None,
                  every_build: bool = False) -> tuple[dict[str, tuple], list]:
    """``{name: ([(build label, searcher), ...], corpus embeddings, test query embeddings)}`` of the
    systems whose artefacts exist (a missing one is logged and left out), and the test queries'
    judgements. ``settings`` narrows the peers' dev grids (None: the sqrt(N) rule); ``spent``
    collects each build's time, memory and bytes (:func:`benchmarks.trained_costs.measured`), keyed
    (system, build label); ``every_build``: a peer at every point of its grid, not the dev-tuned one."""
    dataset = Dataset.read(Path(resources) / "data") if dataset is None else dataset
    test, dev = split_rows(dataset, "test"), split_rows(dataset, "dev")
    out, spent, loaded = {}, {} if spent is None else spent, {}
    for name, folder in folders.items():
        tree = report.is_tree(name)
        if not (folder / "emb" / "corpus.npy").exists() or (tree and not (folder / "index").exists()):
            log.warning("%s: no artefacts under %s, left out", name, folder)
            continue
        if folder not in loaded:  # the peers share one copy of their vectors (10^6 x 384 is 1.5 GB)
            loaded[folder] = _emb(folder / "emb")
        docs, queries = loaded[folder]
        builds = []
        for params in _builds(name, folder, docs, queries[dev], settings, every_build, _tree_leaves(folders)):
            label = "" if params is None else json.dumps(params, sort_keys=True)
            with costs.measured(spent, (name, label)):
                searcher = _build(name, folder, docs, params)
            costs.record_bytes(spent, (name, label), searcher)
            builds.append((label, searcher))
        out[name] = (builds, docs, queries[test])
    return out, judged_rows(dataset, test)


def _builds(name: str, folder: Path, docs: np.ndarray, dev_queries: np.ndarray, settings: SearchConfig | None,
            every_build: bool, n_leaves: int | None) -> list[dict | None]:
    """The build parameters of one system: None for a tree (built as the search rule loads it),
    the tree's list count for its controls, else the dev-tuned point of the peer's grid or, with
    ``every_build``, every point."""
    method = report.method(name)
    same_lists = report.SAME_LISTS.fullmatch(method)
    if same_lists:
        return [{"nlist": int(same_lists.group(1))}]
    kind = ann_kind(method)
    if kind.from_index:
        return [None]
    if kind.tree_lists:
        return [{"nlist": int(n_leaves), "m": docs.shape[1] // 2, **PQ}]
    grid = default_grid(method, len(docs), settings)
    if method == "faiss-ivfpq":
        grid = [{**g, "m": docs.shape[1] // 2, **PQ} for g in grid]
    if every_build or len(grid) == 1:
        log.info("%s: %d build(s) %s", name, len(grid), grid)
        return grid
    cost = settings.budget_cost if settings else "documents"  # the cost the search rule's tuning reads
    params = tune_on_dev(method, docs, dev_queries, grid=grid, cost=cost)[0]
    log.info("%s: dev-tuned %s", name, params)
    return [params]


def _build(name: str, folder: Path, docs: np.ndarray, params: dict | None):
    method = report.method(name)
    if report.SAME_LISTS.fullmatch(method):
        return build_searcher("faiss-ivf", docs, **params)
    kind = ann_kind(method)
    if kind.from_index:  # a search of the trained index, loaded as the search rule loads it
        codes = SearchConfig(pq_m=docs.shape[1] // 2, pq_nbits=PQ["nbits"], pq_rerank=PQ["rerank"])
        return resolve(kind.from_index)(folder / "index", codes)[2]
    return build_searcher(method, docs, **params)
