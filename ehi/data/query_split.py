"""Seeded train/dev/test splits of the judged queries, for collections whose qrels have one split.

Most public test collections (BEIR's TREC-COVID, ArguAna, Touché, SciDocs, Climate-FEVER, the
classic pre-web collections) publish judgements for a single split, usually ``test``. EHI needs
train judgements, so ``dataset.query_split`` divides the judged queries by fractions: a query moves
with all its judgements, so the three splits are disjoint and together cover every judged query.

The split is a function of the set of judged query ids and the seed only: ids are sorted before
the seeded permutation, so reordering the input files or the rows of a table gives the same split.
Its record (fractions, seed, counts, the sha256 of each split's sorted query ids) goes into the
dataset manifest, so that a rerun or another machine can be checked to have the same split.

Results on such a split are not comparable with published zero-shot numbers on the full query set:
the test split is a subset, and the model has seen judgements of the same collection.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Sequence

import numpy as np

from ehi.data.dataset import SPLITS, Dataset
from ehi.data.judgements import check_split_judgements
from ehi.data.validate import DataError

log = logging.getLogger("ehi.data")

KEY = "dataset.query_split"  # the config key every refusal names
SUM_TOLERANCE = 1e-6


def split_sizes(n_queries: int, fractions: Sequence[float]) -> list[int]:
    """Queries per split (train, dev, test): the largest remainders of ``fractions * n_queries``.

    Refused (naming the config key) when the fractions are not three non-negative numbers summing
    to 1, or when a split would be empty.
    """
    fractions = [float(f) for f in fractions]
    if len(fractions) != len(SPLITS) or any(f < 0 for f in fractions):
        raise DataError(f"{KEY}.fractions: expected three non-negative fractions (train, dev, test), got {fractions}")
    if abs(sum(fractions) - 1.0) > SUM_TOLERANCE:
        raise DataError(f"{KEY}.fractions: {fractions} sum to {sum(fractions):g}, not 1")
    exact = np.asarray(fractions) * n_queries
    sizes = np.floor(exact).astype(int)
    # hand the queries left over to the largest remainders (ties: the earlier split), so sizes sum to n
    order = sorted(range(len(SPLITS)), key=lambda i: (-(exact[i] - sizes[i]), i))
    for i in order[: n_queries - int(sizes.sum())]:
        sizes[i] += 1
    empty = [split for split, size in zip(SPLITS, sizes) if size == 0]
    if empty:
        raise DataError(
            f"{KEY}.fractions: {fractions} of {n_queries} judged queries leave split(s) {empty} empty; "
            "every split needs at least one query"
        )
    return sizes.tolist()


def ids_sha256(query_ids) -> str:
    """sha256 of the sorted ids, one per line: the fingerprint of a split's query set."""
    return hashlib.sha256("\n".join(sorted(map(str, query_ids))).encode()).hexdigest()


def split_record(dataset: Dataset, fractions: Sequence[float], seed: int) -> dict:
    """What the manifest keeps of a query split: enough to check that another run made the same one."""
    queries = dataset.queries
    return {
        "fractions": [float(f) for f in fractions],
        "seed": int(seed),
        "counts": {s: int((queries.split == s).sum()) for s in SPLITS},
        "query_ids_sha256": {s: ids_sha256(queries.query_id[queries.split == s]) for s in SPLITS},
    }


def split_queries(dataset: Dataset, fractions: Sequence[float], seed: int = 0) -> Dataset:
    """Reassign every judged query, with its judgements, to train/dev/test by ``fractions``.

    Refused when the collection already has a train split (use it, or drop its train qrels), when
    its judgements come in more than one split (which one would the split replace?), when the
    fractions do not sum to 1, or when a split would be empty.
    """
    published = sorted(dataset.queries.split.unique())
    if "train" in published:
        n_train = int((dataset.queries.split == "train").sum())
        raise DataError(
            f"{KEY}: {dataset.name} already has a train split ({n_train} judged queries); "
            f"remove {KEY} to use the published splits"
        )
    if len(published) > 1:
        raise DataError(f"{KEY}: {dataset.name} has judgements in splits {published}; {KEY} needs a collection "
                        "whose qrels have a single split")
    pool = np.sort(dataset.queries.query_id.to_numpy(dtype=str))
    sizes = split_sizes(len(pool), fractions)
    shuffled = pool[np.random.default_rng(seed).permutation(len(pool))]
    split_of = dict(zip(shuffled.tolist(), np.repeat(np.array(SPLITS), sizes).tolist()))
    queries = dataset.queries.assign(split=dataset.queries.query_id.map(split_of))
    qrels = dataset.qrels.assign(split=dataset.qrels.query_id.map(split_of))
    for split in SPLITS:  # as for a published split: a split nothing in could be trained on or scored
        check_split_judgements(qrels[qrels.split == split], split, f"{KEY} of dataset {dataset.name!r}")
    log.info("%s: %s split %d judged %s queries into train/dev/test %s (fractions %s, seed %d)",
             dataset.name, KEY, len(pool), published[0] if published else "", sizes, list(fractions), seed)
    return Dataset(dataset.name, dataset.corpus, queries, qrels)
