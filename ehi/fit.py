"""EHI's tree on your own embeddings: ``ehi.fit_tree``, an index that ``ehi.export_faiss`` writes.

The pipeline trains the encoder and the tree together; a user with embeddings from any model can
still have EHI's tree over them, trained as the paper trains it where the data allows:

- with ``pairs`` (query row, relevant document row) and ``query_emb``: L_indexing, each query
  routed to the leaves of its relevant documents, other documents pushed out
  (:func:`ehi.train.tree_fit.pair_indexing_loss`, in-batch and corpus negatives);
- without pairs: the label-free L_neighbour (each document shares its path with one of its nearest
  neighbours, :mod:`ehi.train.label_free`), or with ``init="kmeans"`` a (hierarchical) k-means
  start and no training.

    import ehi
    index = ehi.fit_tree(doc_emb, height=1, branching=64)          # label-free
    index = ehi.fit_tree(doc_emb, query_emb, pairs, height=2)      # from (query, doc) pairs
    rows, scores, n_scored = index.search(query_emb, beam=8, k=10)
    index.save("my_tree")
    ehi.export_faiss("my_tree", "my_tree.faiss")                   # doc ids: rows of doc_emb
"""

from __future__ import annotations

import warnings

import numpy as np
import torch

from ehi.core.config import SEED_MAX
from ehi.core.errors import ConfigError, DataError
from ehi.model.tree import check_leaves_fit
from ehi.model.tree_stats import leaf_health
from ehi.search.tree_index import EHIIndex

INITS = ("standardize", "kmeans")


def _embeddings(name: str, emb, dim: int | None = None) -> np.ndarray:
    emb = np.ascontiguousarray(emb, dtype=np.float32)
    if emb.ndim != 2 or len(emb) == 0:
        raise DataError(f"{name} must be a non-empty (n, dim) array, got shape {emb.shape}")
    if dim is not None and emb.shape[1] != dim:
        raise DataError(f"{name} has dimension {emb.shape[1]}, doc_emb has {dim}")
    if not np.isfinite(emb).all():
        raise DataError(f"{name} holds NaN or inf")
    return emb


def _pairs(pairs, n_queries: int, n_docs: int) -> np.ndarray:
    pairs = np.asarray(pairs)
    if pairs.ndim != 2 or pairs.shape[1] != 2 or len(pairs) == 0 or pairs.dtype.kind not in "iu":
        raise DataError(f"pairs must be a non-empty (n, 2) integer array of (query row, doc row), got {pairs.shape}")
    if pairs[:, 0].min() < 0 or pairs[:, 0].max() >= n_queries or pairs[:, 1].min() < 0 or pairs[:, 1].max() >= n_docs:
        raise DataError(f"pairs hold a row outside query_emb ({n_queries}) or doc_emb ({n_docs})")
    return pairs.astype(np.int64)


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _check_arguments(n_docs: int, height, branching, steps, lr, batch_size, negatives, margin, seed, threads) -> None:
    """Every size and count before anything is allocated (a tree of B^H leaves is (B^H, ...) memory):
    one ConfigError naming the argument."""
    counts = {"height": (height, 1), "steps": (steps, 0), "batch_size": (batch_size, 1), "negatives": (negatives, 0),
              "seed": (seed, 0)}
    if branching is not None:
        counts["branching"] = (branching, 2)
    if threads is not None:
        counts["threads"] = (threads, 1)
    for name, (value, least) in counts.items():
        if not _is_int(value) or value < least:
            raise ConfigError(f"{name} must be an integer >= {least}, got {value!r}")
    if seed > SEED_MAX:
        raise ConfigError(f"seed must be at most {SEED_MAX} (with the seeds derived from it, what every seeded library takes), got {seed}")
    for name, value, positive in (("lr", lr, True), ("margin", margin, False)):
        if not isinstance(value, (int, float, np.floating)) or not np.isfinite(value) or (positive and value <= 0):
            raise ConfigError(f"{name} must be a finite {'positive ' if positive else ''}number, got {value!r}")
    if branching is not None:
        check_leaves_fit(int(branching) ** int(height), n_docs, height, branching, names="height or branching")


def _start(doc_emb: np.ndarray, height: int, branching: int, init: str, seed: int):
    from ehi.model.tree import TreeIndexer
    from ehi.model.tree_init import kmeans_init_

    torch.manual_seed(seed)
    tree = TreeIndexer(doc_emb.shape[1], height, branching)
    return kmeans_init_(tree, doc_emb, seed) if init == "kmeans" else tree.standardize_(doc_emb)


def _fit_pairs(tree, doc_emb, query_emb, pairs, steps, lr, batch_size, negatives, margin, seed):
    from ehi.train.tree_fit import pair_indexing_loss, run_tree_steps

    relevant = [np.empty(0, dtype=np.int64)] * len(query_emb)
    for q in np.unique(pairs[:, 0]):
        relevant[q] = np.unique(pairs[pairs[:, 0] == q, 1])
    queries, docs = torch.from_numpy(query_emb), torch.from_numpy(doc_emb)
    rng = np.random.default_rng(seed)
    loss = lambda r: pair_indexing_loss(tree, queries, docs, pairs[:, 0], pairs[:, 1], batch_size, margin, r,  # noqa: E731
                                        negatives=negatives, relevant=relevant)
    return run_tree_steps(tree, loss, steps, lr, rng)[0]


def fit_tree(doc_emb, query_emb=None, pairs=None, height: int = 1, branching: int | None = None, *,
             steps: int = 300, init: str = "standardize", lr: float = 1e-2, batch_size: int = 512,
             negatives: int = 8, margin: float = 0.1, seed: int = 0, threads: int | None = 1) -> EHIIndex:
    """EHI's tree fitted on ``doc_emb`` (N, dim), the documents placed in its leaves.

    ``branching`` defaults to about sqrt(N) leaves in all (IVF's usual list count); ``steps`` AdamW
    steps at ``lr`` (label-free: ``batch_size`` anchors per step; with pairs: ``batch_size`` pairs
    and ``negatives`` corpus documents per pair, L_indexing at ``margin``). Bad input is a
    :class:`ehi.core.errors.UserError` naming the argument.
    """
    from ehi.train.label_free import torch_threads, train_tree, tree_shape

    doc_emb = _embeddings("doc_emb", doc_emb)
    _check_arguments(len(doc_emb), height, branching, steps, lr, batch_size, negatives, margin, seed, threads)
    branching = branching or tree_shape(len(doc_emb), height)[1]
    check_leaves_fit(branching**height, len(doc_emb), height, branching, names="height or branching")
    if init not in INITS:
        raise ConfigError(f"init must be one of {INITS}, got {init!r}")
    if (pairs is None) != (query_emb is None):
        raise ConfigError("pairs and query_emb go together: give both (L_indexing) or neither (label-free)")
    with torch_threads(threads):
        if pairs is not None:
            query_emb = _embeddings("query_emb", query_emb, doc_emb.shape[1])
            pairs = _pairs(pairs, len(query_emb), len(doc_emb))
            tree = _start(doc_emb, height, branching, init, seed)
            tree = _fit_pairs(tree, doc_emb, query_emb, pairs, steps, lr, batch_size, negatives, margin, seed)
        elif init == "kmeans":
            tree = _start(doc_emb, height, branching, init, seed).eval()
        else:
            tree = train_tree(doc_emb, height, branching, steps=steps, anchors=batch_size, lr=lr, seed=seed,
                              threads=None)[0]
        index = EHIIndex.build(doc_emb, tree)
    status, why = leaf_health(index.leaf_sizes)
    if status != "ok":  # e.g. identical documents: one leaf holds them all, the rest stay empty
        warnings.warn(f"fit_tree: {why}", stacklevel=2)
    return index
