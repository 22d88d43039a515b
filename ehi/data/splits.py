"""Seeded dev splits carved from training queries, for datasets that publish no dev set (SciFact).

The carve is a function of the set of training query ids and the seed only: ids are sorted before
sampling, so reordering the input files or the rows of a table gives the same dev set.
"""

from __future__ import annotations

import logging

import numpy as np

from ehi.data.dataset import Dataset
from ehi.data.validate import DataError

log = logging.getLogger("ehi.data")


def dev_size(pool: int, fraction: float | None, n: int | None) -> int:
    """Number of queries to move: exactly one of ``fraction`` (of the pool) or ``n``."""
    if (fraction is None) == (n is None):
        raise ValueError("carve_dev: give exactly one of fraction or n")
    if fraction is not None:
        if not 0.0 <= fraction < 1.0:
            raise ValueError(f"carve_dev: fraction must be in [0, 1), got {fraction}")
        # At least one query for any positive fraction, so a tiny dataset still gets a dev split.
        size = max(1, round(fraction * pool)) if fraction > 0 else 0
    else:
        size = int(n)
        if size < 0:
            raise ValueError(f"carve_dev: n must be >= 0, got {n}")
    if size >= pool and size > 0:
        raise DataError(f"carve_dev: cannot move {size} of {pool} queries; the source split would be empty")
    return size


def carve_dev(
    dataset: Dataset,
    from_split: str = "train",
    fraction: float | None = None,
    n: int | None = None,
    seed: int = 0,
    to_split: str = "dev",
) -> Dataset:
    """Move a seeded random subset of ``from_split`` queries, with their qrels, to ``to_split``.

    A size of zero returns the dataset unchanged, so ``dev_fraction: 0`` in a config turns the carve
    off. Carving into a split that already has queries is an error: mixing a published dev set with
    carved queries would make the dev numbers incomparable to anyone else's.
    """
    queries, qrels = dataset.queries, dataset.qrels
    pool = np.sort(queries.query_id[queries.split == from_split].to_numpy(dtype=str))
    size = dev_size(len(pool), fraction, n)
    if size == 0:
        return dataset
    existing = int((queries.split == to_split).sum())
    if existing:
        raise DataError(
            f"{dataset.name}: split {to_split!r} already has {existing} queries; "
            f"set the dev fraction to 0 to use them instead of carving"
        )
    chosen = set(np.random.default_rng(seed).choice(pool, size=size, replace=False).tolist())
    move_q = queries.query_id.isin(chosen)
    move_r = qrels.query_id.isin(chosen) & (qrels.split == from_split)
    queries = queries.assign(split=queries.split.where(~move_q, to_split))
    qrels = qrels.assign(split=qrels.split.where(~move_r, to_split))
    log.info("%s: moved %d of %d %s queries to %s (seed %d)", dataset.name, size, len(pool), from_split, to_split, seed)
    return Dataset(dataset.name, dataset.corpus, queries, qrels)


def subsample_train(dataset: Dataset, n_queries: int, seed: int = 0) -> Dataset:
    """Keep a seeded sample of ``n_queries`` training queries (with all their judgements) and drop the
    rest of the train split: the training-query axis of a study, the documents and the dev and test
    queries unchanged. The sample of a smaller size is a subset of that of a larger one (one seeded
    order, cut at ``n_queries``), so the axis's points differ in queries added, not in queries drawn."""
    train_ids = np.array(sorted(dataset.queries.query_id[dataset.queries.split == "train"].astype(str)))
    if n_queries >= len(train_ids):
        raise DataError(f"dataset.train_queries {n_queries}: the train split has only {len(train_ids)} queries; "
                        "leave it out to train on all of them")
    order = np.random.default_rng(seed).permutation(len(train_ids))
    drop = set(train_ids[order[n_queries:]])
    queries = dataset.queries[~dataset.queries.query_id.astype(str).isin(drop)].reset_index(drop=True)
    qrels = dataset.qrels[~dataset.qrels.query_id.astype(str).isin(drop)].reset_index(drop=True)
    log.info("train split: %d of %d queries kept (seed %d)", n_queries, len(train_ids), seed)
    return Dataset(dataset.name, dataset.corpus, queries, qrels)
