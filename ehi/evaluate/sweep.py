"""One system, every budget: the glue between embeddings, an index and a run table.

A system is ``{encoder}+{search}`` (docs/systems_and_metrics.md); the search is a kind of
:mod:`ehi.search.registry`. A kind that searches the trained index (its entry's ``from_index``, as
EHI's tree) is loaded from the index folder; any other is built over the encoder's embeddings, its
build parameters tuned on the tune split's queries (never on the evaluated split) before it is swept
on the evaluated one.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from ehi.core.errors import ConfigError, DataError
from ehi.core.work import fraction_of_work
from ehi.data.dataset import Dataset
from ehi.data.judgements import judged_query_ids
from ehi.evaluate.metrics import run_frame, time_search
from ehi.search.config import SearchConfig
from ehi.core.plugins import resolve
from ehi.search.registry import ann_kind, build_searcher
from ehi.search.tune import default_grid, tune_on_dev

log = logging.getLogger(__name__)


def split_rows(dataset: Dataset, split: str) -> np.ndarray:
    """Row positions (into queries.parquet and its embeddings) of the judged queries of ``split``."""
    judged = judged_query_ids(dataset.qrels[dataset.qrels.split == split])
    mask = (dataset.queries.split == split) & dataset.queries.query_id.isin(judged)
    rows = np.flatnonzero(mask.to_numpy())
    if len(rows) == 0:
        raise DataError(f"dataset {dataset.name!r} has no judged queries in split {split!r}")
    return rows


def _anns(kind, corpus_emb, tune_emb, settings: SearchConfig):
    grid = default_grid(kind, len(corpus_emb), settings)
    if not ann_kind(kind).tuned:  # one build as it is (exact search; the tree's IVF control at its lists)
        if len(grid) != 1:
            raise ConfigError(f"search {kind!r} is not tuned, so it builds one index; its settings give {grid}")
        params = grid[0]
    else:
        params, curves = tune_on_dev(kind, corpus_emb, tune_emb, grid=grid, cost=settings.budget_cost)
        log.info("%s: tuned on %d %s queries over %d builds -> %s", kind, len(tune_emb), settings.tune_split,
                 curves.params.nunique(), params)
    searcher = build_searcher(kind, corpus_emb, **params)
    searcher.set_threads(settings.threads)
    return searcher.budget_param, searcher.default_sweep(), searcher, params


def search_system(system: str, variant: str, dataset: Dataset, corpus_emb: np.ndarray, query_emb: np.ndarray,
                  split: str, settings: SearchConfig | dict, index_dir=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Search ``system`` at every budget on ``split``: (run table, QPS table). The run's ``attrs["index"]``
    holds what was built: its parameters and, for a FAISS index, its factory string (``faiss_index``)."""
    settings = settings if isinstance(settings, SearchConfig) else SearchConfig.from_dict(settings)
    _, method = system.split("+", 1)
    rows = split_rows(dataset, split)
    queries = np.ascontiguousarray(query_emb[rows])
    k = min(settings.k, len(corpus_emb))
    kind = ann_kind(method)
    if kind.from_index:
        param, budgets, searcher, built = resolve(kind.from_index)(index_dir, settings)
    else:
        if ann_kind(method).tuned and settings.tune_split == split:  # tuning on the test queries
            raise ConfigError(f"search.tune_split {split!r} is the evaluated split; tune on another split")
        tune_rows = split_rows(dataset, settings.tune_split) if ann_kind(method).tuned else rows[:0]
        param, budgets, searcher, built = _anns(method, corpus_emb, query_emb[tune_rows], settings)
    query_ids = dataset.queries.query_id.to_numpy()[rows]
    doc_ids = dataset.corpus.doc_id.to_numpy()
    runs, timings = [], []
    for budget in budgets:
        found, scores, n_scored = searcher.search(queries, k, budget)
        n_routed = np.full(len(queries), searcher.routing_units(budget), dtype=np.int64)
        runs.append(run_frame(query_ids, doc_ids, found, scores, system, variant, param, budget, n_scored,
                              n_routed if settings.budget_cost == "work" else None))
        timing = time_search(lambda q: searcher.search(q, k, budget), queries, settings.batch_size, settings.threads)
        timings.append({"system": system, "variant": variant, "budget_param": param, "budget_value": float(budget), **timing})
        frac_docs = n_scored.mean() / len(corpus_emb)
        frac_work = float(fraction_of_work(n_scored.mean(), n_routed[0], len(corpus_emb)))
        log.info("%s %s=%s: %.2f%% scored, %.2f%% of work, %.0f qps", system, param, budget,
                 100 * frac_docs, 100 * frac_work, timing["qps"])
        if settings.max_frac < 1 and (frac_work if settings.budget_cost == "work" else frac_docs) > settings.max_frac:
            break  # budgets rise with cost but not strictly (beams are not nested): one point past
    spelled = searcher.faiss_index()  # what FAISS built, whatever the config said
    built = {**built, **({"faiss_index": spelled} if spelled else {})}
    log.info("%s built with %s", system, built)
    run = pd.concat(runs, ignore_index=True)
    run.attrs["index"] = built  # the run's metadata (workflow/scripts/search.py)
    return run, pd.DataFrame(timings)
