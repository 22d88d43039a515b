"""One entry point from a dataset config to a :class:`Dataset`, whatever its source."""

from __future__ import annotations

import logging
import re
from pathlib import Path

from ehi.data.dataset import Dataset
from ehi.data.query_split import split_queries
from ehi.data.validate import DataError

log = logging.getLogger(__name__)

# Far above what any encoder reads (512 tokens are some 3,000 characters of English), yet a bound:
# a tokenizer reads a whole text before it truncates, so one 50 MB document costs minutes and
# gigabytes in every embedding pass. Longer texts are cut here, and counted in the log.
MAX_TEXT_CHARS = 100_000
NAME = re.compile(r"(?!\.\.?$)[A-Za-z0-9_.-]{1,100}")  # one path component, as the config schema says


def bound_texts(dataset: Dataset, limit: int = MAX_TEXT_CHARS) -> Dataset:
    """Cut every title and text longer than ``limit`` characters to ``limit``, logging how many."""
    for table, columns in (("corpus", ("title", "text")), ("queries", ("text",))):
        frame = getattr(dataset, table)
        for column in columns:
            lengths = frame[column].str.len()
            long = lengths > limit
            if long.any():
                log.warning("dataset %s: %d %s %s(s) longer than %d characters cut to %d (longest %d)",
                            dataset.name, int(long.sum()), table, column, limit, limit, int(lengths.max()))
                frame[column] = frame[column].where(~long, frame[column].str.slice(0, limit))
    return dataset


def prepare_dataset(
    name: str,
    source: str,
    path: str | None = None,
    cache_dir: str | Path = "resources/downloads",
    dev_fraction: float = 0.0,
    dev_seed: int = 0,
    synthetic: dict | None = None,
    query_split: dict | None = None,
    train_queries: int | None = None,
) -> Dataset:
    """Build the dataset a config describes.

    ``source`` is ``synthetic``, ``beir`` (a local BEIR directory at ``path``) or the name of a
    downloadable source (``scifact``, ``fiqa``, ``msmarco``, ...). A named source with a ``path``
    reads that local copy (in the source's own layout) instead of downloading. ``dev_fraction`` > 0 carves a seeded dev split
    out of the train queries (for datasets, like SciFact, that ship none). ``query_split``
    (``{"fractions": [train, dev, test], "seed": s}``) splits the judged queries of a collection
    whose qrels have a single split (:mod:`ehi.data.query_split`). ``train_queries`` keeps a
    seeded sample of that many training queries (:func:`ehi.data.splits.subsample_train`).
    """
    if not NAME.fullmatch(str(name)):
        raise DataError(f"dataset.name {str(name)[:120]!r}: must be one path component of letters, digits, '_', "
                        "'.' and '-' (at most 100 characters, not '.' or '..'): it names the output directories")
    if query_split and dev_fraction > 0:
        raise DataError("dataset.query_split and dataset.dev_fraction are both set: the query split makes its "
                        "own dev split; set dataset.dev_fraction to 0")
    if source == "synthetic":
        from ehi.data.synthetic import SyntheticConfig, generate

        from ehi.data.validate import check_dataset

        dataset = check_dataset(generate(SyntheticConfig.from_dict(synthetic or {})))
    else:
        from ehi.data.sources import load_dataset

        # a local copy (in the source's own layout) when path is set, else a cached download
        dataset = load_dataset(source, path=path, cache_dir=cache_dir, name=name)
    dataset.name = name
    dataset = bound_texts(dataset)
    if query_split:
        dataset = split_queries(dataset, query_split["fractions"], query_split.get("seed", 0))
    if dev_fraction > 0:
        from ehi.data.splits import carve_dev

        dataset = carve_dev(dataset, from_split="train", fraction=dev_fraction, seed=dev_seed)
    if train_queries:
        from ehi.data.splits import subsample_train

        dataset = subsample_train(dataset, int(train_queries), seed=dev_seed)
    log.info(
        "dataset %s: %d documents, queries per split %s, %d judgements",
        name, len(dataset.corpus), dataset.queries.split.value_counts().to_dict(), len(dataset.qrels),
    )
    return dataset
