"""From search results to runs, per-query metrics, KMR summaries and throughput.

Metric definitions (ranx's, computed without numba by ehi.core.rank_metrics, equal to ranx's values
bit for bit; tests/evaluate/test_metrics.py checks them against ir-measures):

* ``ndcg@k``: gain = the graded relevance as judged (linear gain, trec_eval's ``ndcg_cut``),
  discount 1 / log2(rank + 1), normalised by the ideal ordering of the query's judgements.
* ``mrr@k``: 1 / rank of the first document with relevance >= 1 in the top k, else 0.
* ``recall@k``: relevant (>= 1) documents in the top k / all relevant documents of the query.
* Cutoffs are capped at the corpus size (``recall@1000`` on a 500-document corpus is computed at
  500) but keep their nominal names, so tables line up across datasets.
* Ranking and ties: the searcher's order (the ``rank`` column) is the ranking, never the score:
  documents with equal scores keep the order the index returned them in, and two libraries cannot
  break the tie differently (ranx, for the names it computes, is handed ``-rank`` as the score).
* Judged queries are those with at least one judgement of relevance >= 1. A judged query missing
  from a run (an index that returned nothing) scores 0 on every metric; it is not dropped.
* ``psp@k`` (extreme classification, labels = documents): propensity-scored precision at k with
  the Extreme Classification Repository's normalisation (``ehi.evaluate.xmc``); propensities come from the
  train split's label frequencies, so these metrics need ``inv_prop`` (one value per corpus row).
* ``frac_visited`` of a query = its ``n_scored`` / corpus size (NaN for a query missing from the
  run, whose count is unknown); a summary's ``frac_visited`` is the mean over queries.
* ``frac_work`` of a query = (``n_scored`` + ``n_routed``) / corpus size: the documents and the
  centroids or router rows it scored (:mod:`ehi.core.work`); NaN where the run has no routing count.
"""

from __future__ import annotations

import sys
from typing import Callable

import numpy as np
import pandas as pd

from ehi.data.judgements import relevant
from ehi.core.errors import DataError
from ehi.core.io import with_optional_columns
from ehi.core.schemas import schema
from ehi.core.work import fraction_of_work
from ehi.data.dataset import qrels_dict
from ehi.evaluate.metric_registry import MetricContext, ranx_names, registered, scorers
from ehi.evaluate.native_scorers import judged_qids
from ehi.core.ranking import GROUP, at_budget, ranked_rows_metrics  # noqa: F401 (re-exported)

DEFAULT_METRICS = ("ndcg@10", "mrr@10", "recall@10", "recall@100", "recall@1000")
TARGETS = (0.01, 0.02, 0.05, 0.1, 0.2, 1.0)


def run_frame(query_ids, doc_ids_of_rows, rows, scores, system: str, variant: str, budget_param: str,
              budget_value: float, n_scored, n_routed=None) -> pd.DataFrame:
    """One search's results (rows/scores (nq, k), -1 padded) as a ``run`` table, ranks from 1;
    ``n_routed`` (nq,): each query's routing units (None: not counted, a null column)."""
    rows = np.asarray(rows)
    valid = rows >= 0  # (nq, k)
    q_idx = np.nonzero(valid)[0]
    rank = np.cumsum(valid, axis=1)[valid]  # 1-based rank among the valid entries of each row
    frame = pd.DataFrame({
        "query_id": np.asarray(query_ids).astype(str)[q_idx],
        "doc_id": np.asarray(doc_ids_of_rows).astype(str)[rows[valid]],
        "rank": rank.astype(np.int32),
        "score": np.asarray(scores, dtype=np.float32)[valid],
        "system": system,
        "variant": variant,
        "budget_param": budget_param,
        "budget_value": float(budget_value),
        "n_scored": np.asarray(n_scored, dtype=np.int64)[q_idx],
        "n_routed": (np.full(len(q_idx), np.nan) if n_routed is None
                     else np.asarray(n_routed, dtype=np.float64)[q_idx]),
    })
    return frame[schema("run").names]


def capped_metrics(metrics, corpus_size: int) -> dict[str, str]:
    """Nominal metric name -> the ranx name actually computed (cutoff capped at the corpus size)."""
    out = {}
    for name in metrics:
        base, _, cut = name.partition("@")
        out[name] = f"{base}@{min(int(cut), corpus_size)}" if cut else name
    return out


def _judged_qrels(qrels_df: pd.DataFrame):
    from ranx import Qrels

    # judged queries = those with a relevant judgement; ranx ignores the others' rows (rel_lvl=1) anyway
    return Qrels.from_dict(qrels_dict(relevant(qrels_df)))


def _ranx_run(group: pd.DataFrame):
    from ranx import Run

    # ranx asserts object-dtype ids; pandas 3 would give its own string dtype
    frame = pd.DataFrame({"q_id": group.query_id.astype(str).astype(object),
                          "doc_id": group.doc_id.astype(str).astype(object),
                          "score": -group["rank"].astype(np.float64)})
    return Run.from_df(frame, q_id_col="q_id", doc_id_col="doc_id", score_col="score")


def _ranx_values(qrels_df: pd.DataFrame, group: pd.DataFrame, names: list[str], qids: list[str]) -> dict:
    """ranx's per-query values of ``names`` (those no registered family computes), in ``qids`` order."""
    from ranx import evaluate

    qrels = _judged_qrels(qrels_df)  # fresh each time: make_comparable must not leak across runs
    assert list(qrels.keys()) == qids, "ranx orders queries by sorted id"
    values = evaluate(qrels, _ranx_run(group), names, return_mean=False, make_comparable=True)
    return values if isinstance(values, dict) else {names[0]: values}


def per_query_metrics(run_df: pd.DataFrame, qrels_df: pd.DataFrame, dataset: str, corpus_size: int,
                      metrics=DEFAULT_METRICS, inv_prop=None, doc_ids=None) -> pd.DataFrame:
    """Per-query metric values of every search in ``run_df`` (one per GROUP key), ``per_query`` schema.

    Metrics of a registered family (:mod:`ehi.evaluate.metric_registry`: nDCG, MRR, recall,
    precision, hits, psp and plugins') are computed by it, any other name by ranx: ``psp@k`` needs
    ``inv_prop`` (inverse propensity per corpus row) and ``doc_ids`` (the corpus ids in row order)."""
    if run_df.empty:  # a search that answered no query (a NaN centroid routes nowhere): never scored as zeros
        raise DataError(f"dataset {dataset}: a run without rows, the search returned no document for any query")
    run_df = with_optional_columns(run_df, "run")
    names = capped_metrics(ranx_names(metrics), corpus_size)
    computed = sorted(set(names.values()))
    custom = [n for members in registered(metrics).values() for n in members]
    names.update({name: name for name in custom})
    qids = judged_qids(qrels_df)
    context = MetricContext(qids, qrels_df, corpus_size, doc_ids, inv_prop)
    own = scorers(metrics, context)
    frames = []
    for key, group in run_df.groupby(GROUP, sort=False):
        values = _ranx_values(qrels_df, group, computed, qids) if computed else {}
        for score in own:
            values = {**values, **score(group)}
        counts = group.groupby("query_id")[["n_scored", "n_routed"]].first().reindex(qids)
        frac = counts.n_scored.to_numpy(dtype=np.float64) / corpus_size
        work = fraction_of_work(counts.n_scored, counts.n_routed, corpus_size)
        for nominal, ranx_name in names.items():
            frame = pd.DataFrame({"query_id": qids, "metric": nominal, "frac_visited": frac, "frac_work": work,
                                  "value": np.asarray(values[ranx_name], dtype=np.float64)})
            frames.append(frame.assign(dataset=dataset, **dict(zip(GROUP, key))))
    if not frames:
        return pd.DataFrame(columns=schema("per_query").names)
    return pd.concat(frames, ignore_index=True)[schema("per_query").names]


def summarize(per_query_df: pd.DataFrame) -> pd.DataFrame:
    """Mean over queries of each (search, metric): ``summary`` schema. Throughput is not here: it
    changes with every run and the machine's load, so it stays in the search's own ``qps`` table
    (git-ignored), and a summary is the same on every run of the same code."""
    keys = ["dataset", *GROUP]
    per_query_df = with_optional_columns(per_query_df, "per_query")
    summary = (per_query_df.groupby([*keys, "metric"], sort=False)
               .agg(frac_visited=("frac_visited", "mean"), frac_work=("frac_work", "mean"),
                    value=("value", "mean")).reset_index())
    return summary[schema("summary").names]


def kmr_table(summary: pd.DataFrame, targets=TARGETS, metric: str = "ndcg@10") -> pd.DataFrame:
    """Each system's ``metric`` at its largest budget whose mean fraction visited <= each target.

    Long format, one row per (dataset, system, variant, target): the chosen point's budget_param,
    budget_value, frac_visited and value, all NaN when the system has no point that cheap.
    Pivot on ``target`` for the paper's table.
    """
    rows = []
    for (dataset, system, variant), curve in summary[summary.metric == metric].groupby(
            ["dataset", "system", "variant"], sort=False):
        curve = curve.sort_values(["frac_visited", "budget_value"])
        for target in targets:
            at = at_budget(curve.frac_visited, target)
            point = curve.iloc[at] if at is not None else None
            rows.append({
                "dataset": dataset, "system": system, "variant": variant, "metric": metric,
                "target": float(target),
                "budget_param": point.budget_param if point is not None else None,
                "budget_value": point.budget_value if point is not None else np.nan,
                "frac_visited": point.frac_visited if point is not None else np.nan,
                "value": point.value if point is not None else np.nan,
            })
    return pd.DataFrame(rows)


def _set_threads(threads: int) -> None:
    """Pin the thread pools a search may use (faiss's OpenMP, torch's if torch is loaded)."""
    import faiss

    faiss.omp_set_num_threads(int(threads))
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(int(threads))


def time_search(search: Callable[[np.ndarray], object], queries: np.ndarray, batch_size: int = 256,
                threads: int = 1, repeats: int = 3) -> dict:
    """Wall-clock throughput of ``search(batch)`` over all queries in batches of ``batch_size``.

    One untimed warm-up pass, then ``repeats`` timed passes, looped by faiss's
    ``contrib.evaluation.RepeatTimer``; the median pass gives ``seconds`` (the timer reports the
    mean, which one descheduled pass on a shared machine drags up).
    Returns seconds, items (queries), qps, batch_size, threads.
    """
    from faiss.contrib.evaluation import RepeatTimer

    _set_threads(threads)
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    timer = RepeatTimer(warmup=1, nt=int(threads), runs=1 + max(1, repeats))
    for _ in timer:
        for s in range(0, len(queries), batch_size):
            search(queries[s : s + batch_size])
    seconds = float(np.median(timer.times))
    return {"seconds": seconds, "items": len(queries), "qps": len(queries) / max(seconds, 1e-12),
            "batch_size": int(batch_size), "threads": int(threads)}


def time_searcher(searcher, queries: np.ndarray, k: int, budget_value, batch_size: int = 256,
                  threads: int = 1, repeats: int = 3) -> dict:
    """:func:`time_search` of an ANNS searcher (ranking only, not the budget bookkeeping)."""
    searcher.set_threads(threads)
    record = time_search(lambda batch: searcher.search_ids(batch, k, budget_value), queries,
                         batch_size, threads, repeats)
    return {"budget_param": searcher.budget_param, "budget_value": float(budget_value), **record}
