"""ScaNN baselines (scann 1.4.2): a k-means tree over the corpus, searched ``leaves_to_search`` deep.

Two scorings inside the searched partitions: ``bf`` (exact float32 inner products, system
``scann``) and ``ah`` (anisotropic asymmetric hashing, optionally re-scored exactly on the best
``reorder_k`` candidates, system ``scann-ah``).

Budget accounting. ScaNN's Python API does not say which partitions a query searched, so we replay
its routing from the partitioner it serialises: the partition centres
(``serialized_partitioner.pb``) and each document's partition (``datapoint_to_token.npy``). A
query searches the ``leaves_to_search`` centres with the largest inner product (the config's
``query_tokenization_distance_override`` is DotProductDistance); ``n_scored`` = the summed sizes
of those partitions. With AH the scores are approximate, but every document of those partitions is
still scored, so it counts. Checked in tests/search/test_baselines.py: scann's results lie inside the
replayed partitions, and asking scann for every candidate returns exactly ``n_scored`` documents.

One trap: scann re-seeds partitions smaller than ``min_partition_size`` (default 50) by splitting
large ones, which on a small corpus leaves near-duplicate centres whose ties no replay can break
the way scann's kernels do. We default ``min_partition_size`` to min(50, N / (4 * num_leaves)).
"""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

import numpy as np
import scann
from scann.partitioning import partitioner_pb2

from ehi.search.base import Searcher, SearchResult, as_matrix, log_grid, pad_results

SCANN_DIR = "scann"


def default_num_leaves(n_docs: int) -> int:
    return max(1, min(n_docs, int(round(math.sqrt(n_docs)))))


def read_partitioner(scann_dir: Path) -> tuple[np.ndarray, np.ndarray]:
    """Partition centres (L, d) float32 and each document's partition (N,) from a serialised searcher."""
    proto = partitioner_pb2.SerializedPartitioner()
    proto.ParseFromString((scann_dir / "serialized_partitioner.pb").read_bytes())
    root = proto.kmeans.kmeans_tree.root
    if any(len(child.centers) for child in root.children):
        raise ValueError("multi-level scann trees are not supported (configure a single tree level)")
    centers = np.array([list(c.dimension) or list(c.float_dimension) for c in root.centers], dtype=np.float32)
    doc_leaf = np.load(scann_dir / "datapoint_to_token.npy")
    if doc_leaf.ndim != 1:
        raise ValueError("spilled scann partitions (SOAR) are not supported: one partition per document")
    return centers, doc_leaf.astype(np.int64)


def _seeded(seed: int):
    """A builder lambda for a repeatable build: ScaNN's k-means on one thread, with a fixed seed
    (the config proto's ``partitioning.clustering_seed``; the builder API has no seed argument).
    With ScaNN's defaults (k-means on every core), rerunning the synthetic default gave different
    ScaNN results for the same embeddings; one thread costs little at the sizes trained here.
    The seed alone is not enough: see ``random_init=False`` in :func:`_builder`."""
    def build(db, config, training_threads, **kwargs):
        config = config.replace("partitioning {", f"partitioning {{\n clustering_seed: {int(seed)}", 1)
        return scann.scann_ops_pybind.create_searcher(db, config, 1, **kwargs)  # 1 training thread
    return build


def _builder(emb: np.ndarray, params: dict):
    """The scann builder for ``params``: one tree level, then brute-force or AH (+ reordering) scoring."""
    builder = scann.scann_ops_pybind.builder(emb, 10, "dot_product").tree(  # 10: overridden per search
        num_leaves=params["num_leaves"], num_leaves_to_search=1,
        training_sample_size=min(params["training_sample_size"], len(emb)),
        min_partition_size=params["min_partition_size"],
        # k-means++ seeding, the config proto's default. The builder's default, random
        # initialisation, ignores clustering_seed in scann 1.4.2: every build, even in one
        # process, permuted the partition labels and moved the centres by an ulp, so the
        # partitions searched at a budget (and the ScaNN runs) differed between fresh-clone runs.
        random_init=False)
    builder.set_builder_lambda(_seeded(params.get("seed", 0)))
    if params["scoring"] == "bf":
        return builder.score_brute_force()
    if params["scoring"] != "ah":
        raise ValueError(f"scoring must be 'bf' or 'ah', not {params['scoring']!r}")
    builder = builder.score_ah(params["dims_per_block"],
                               anisotropic_quantization_threshold=params["anisotropic_threshold"])
    return builder.reorder(params["reorder_k"]) if params["reorder_k"] > 0 else builder


class ScannSearcher(Searcher):
    """A scann tree searcher plus the partition centres and sizes that replay its routing."""

    budget_param = "leaves_to_search"

    def __init__(self, searcher, centers: np.ndarray, doc_leaf: np.ndarray, params: dict):
        super().__init__(len(doc_leaf), params)
        self.name = "scann-ah" if params["scoring"] == "ah" else "scann"
        self.searcher = searcher
        self.centers = centers  # (L, d)
        self.doc_leaf = doc_leaf  # (N,) each document's partition, as scann assigned it
        self.leaf_sizes = np.bincount(doc_leaf, minlength=len(centers)).astype(np.int64)  # (L,)
        self.threads = 1

    @classmethod
    def build(
        cls,
        emb: np.ndarray,
        num_leaves: int | None = None,
        scoring: str = "bf",
        reorder_k: int = 1000,
        dims_per_block: int = 2,
        anisotropic_threshold: float = 0.2,
        training_sample_size: int = 100_000,
        min_partition_size: int | None = None,
        workdir: str | Path | None = None,
        seed: int = 0,
    ) -> "ScannSearcher":
        """Build a tree-partitioned scann searcher; ``reorder_k=0`` turns AH re-scoring off.

        The searcher is serialised (to ``workdir``, or a temporary directory) to read back its
        partitioner; at scale that writes a copy of the corpus, as saving the index would anyway.
        """
        emb = as_matrix(emb)
        num_leaves = min(int(num_leaves or default_num_leaves(len(emb))), len(emb))
        if min_partition_size is None:
            min_partition_size = max(1, min(50, len(emb) // (4 * num_leaves)))
        params = {"num_leaves": num_leaves, "scoring": scoring,
                  "reorder_k": int(reorder_k) if scoring == "ah" else 0,
                  "dims_per_block": dims_per_block, "anisotropic_threshold": anisotropic_threshold,
                  "training_sample_size": training_sample_size, "min_partition_size": min_partition_size,
                  "seed": int(seed)}
        searcher = _builder(emb, params).build()
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(workdir) if workdir is not None else Path(tmp)
            out.mkdir(parents=True, exist_ok=True)
            searcher.serialize(str(out))
            centers, doc_leaf = read_partitioner(out)
        return cls(searcher, centers, doc_leaf, params)

    @classmethod
    def load(cls, path: Path, meta: dict | None = None) -> "ScannSearcher":
        meta = meta or json.loads((path / "params.json").read_text())
        searcher = scann.scann_ops_pybind.load_searcher(str(path / SCANN_DIR))
        return cls(searcher, *read_partitioner(path / SCANN_DIR), meta["params"])

    def searched_leaves(self, queries: np.ndarray, leaves: int, chunk: int = 4096) -> np.ndarray:
        """The ``leaves`` partitions each query searches (nq, leaves): the replay of scann's routing."""
        queries = as_matrix(queries)
        out = np.empty((len(queries), leaves), dtype=np.int64)
        for s in range(0, len(queries), chunk):
            sims = queries[s : s + chunk] @ self.centers.T  # (chunk, L)
            out[s : s + chunk] = np.argpartition(-sims, leaves - 1, axis=1)[:, :leaves]
        return out

    def search(self, queries: np.ndarray, k: int, budget_value: int) -> SearchResult:
        leaves = self._leaves(budget_value)
        rows, scores = self.search_ids(queries, k, leaves)
        n_scored = self.leaf_sizes[self.searched_leaves(queries, leaves)].sum(axis=1)
        return rows, scores, n_scored.astype(np.int64)

    def routing_units(self, budget_value: int) -> int:
        return len(self.centers)  # every partition centre is scored to pick the leaves to search

    def search_ids(self, queries, k, budget_value):
        kwargs = {"leaves_to_search": self._leaves(budget_value), "final_num_neighbors": int(k)}
        if self.params["reorder_k"] > 0:
            kwargs["pre_reorder_num_neighbors"] = max(self.params["reorder_k"], int(k))
        queries = as_matrix(queries)
        if self.threads > 1:
            ids, scores = self.searcher.search_batched_parallel(queries, **kwargs)
        else:
            ids, scores = self.searcher.search_batched(queries, **kwargs)
        rows = ids.astype(np.int64)
        rows[np.isnan(scores)] = -1  # scann pads short result lists with id 0 and a NaN score
        return pad_results(rows, scores, k)

    def _leaves(self, budget_value) -> int:
        return max(1, min(int(budget_value), len(self.centers)))

    def default_sweep(self) -> list[int]:
        return log_grid(1, len(self.centers), 20)

    def set_threads(self, threads: int) -> None:
        self.threads = int(threads)
        self.searcher.set_num_threads(int(threads))

    def _save_index(self, path: Path) -> None:
        (path / SCANN_DIR).mkdir(exist_ok=True)
        self.searcher.serialize(str(path / SCANN_DIR))
