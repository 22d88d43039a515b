"""The registry's scorers for ``ndcg``, ``mrr``, ``recall``, ``precision`` and ``hits`` at k: the
ranx formulas computed without numba (:mod:`ehi.core.rank_metrics`), from one search's run rows.

The run's order is its ``rank`` column (as :func:`ehi.evaluate.metrics.per_query_metrics` hands
ranx ``-rank``); a judged query missing from the run scores 0; cutoffs are capped at the corpus
size like ranx's (``precision@1000`` on 500 documents divides by 500), under their nominal names.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ehi.core.rank_metrics import padded, rank_metrics
from ehi.data.judgements import judged_query_ids, relevant


def judged_qids(qrels: pd.DataFrame) -> list[str]:
    """The queries with a relevant judgement, in ranx's order (sorted ids): every per-query array's order."""
    return sorted(judged_query_ids(qrels))


def native_scorer(family: str, qids: list[str], qrels: pd.DataFrame, corpus_size: int, ks: list[int]):
    """A function of one search's run rows -> {``family@k``: per-query values in ``qids`` order}."""
    judged = relevant(qrels)
    judged = pd.DataFrame({"query_id": judged.query_id.astype(str), "doc_id": judged.doc_id.astype(str),
                           "grade": judged.relevance.astype(np.float64)})
    position = {q: i for i, q in enumerate(qids)}
    by_query = judged.groupby("query_id").grade.apply(lambda g: np.sort(g.to_numpy())[::-1])
    ideal = padded([by_query.get(q, np.zeros(0)) for q in qids])
    computed = {f"{family}@{k}": f"{family}@{min(k, corpus_size)}" for k in ks}

    def score(group: pd.DataFrame) -> dict[str, np.ndarray]:
        rows = pd.DataFrame({"query_id": group.query_id.astype(str), "doc_id": group.doc_id.astype(str),
                             "rank": group["rank"].to_numpy()})
        rows = rows[rows.query_id.isin(position)].sort_values(["query_id", "rank"], kind="stable")
        rows = rows.merge(judged, on=["query_id", "doc_id"], how="left", sort=False)
        q = rows.query_id.map(position).to_numpy(dtype=np.int64)
        at = rows.groupby("query_id", sort=False).cumcount().to_numpy()
        lengths = np.bincount(q, minlength=len(qids))
        grades = np.zeros((len(qids), max(int(lengths.max(initial=0)), 1)), dtype=np.float64)
        grades[q, at] = rows.grade.fillna(0.0).to_numpy()
        values = rank_metrics(grades, lengths, ideal, sorted(set(computed.values())))
        return {nominal: values[name] for nominal, name in computed.items()}

    return score
