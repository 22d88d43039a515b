"""nDCG, MRR, recall, precision and hits at k, vectorised over queries, equal to ranx's bit for bit.

ranx computes these in numba, and every process that first calls it compiles its typed
containers and kernels again: 5-25 CPU seconds a process, more than the metrics themselves on a
CPU-sized run (the embedded default spends more on it than on training one model). These are the
same formulas in the same floating-point order, so the values are identical, not merely close
(tests/core/test_rank_metrics.py compares them with ranx on random graded runs):

* gains are the judged grades (linear: ranx's ``ndcg``, trec_eval's ``ndcg_cut``); judgements
  below grade 1 are not relevant;
* DCG at k sums ``gain_i / log2(i + 2)`` over ranks i = 0 .. min(k, run length) - 1, left to right;
  the ideal DCG is that of the query's grades sorted best first, cut at min(k, judged documents);
  nDCG is DCG / ideal DCG (0 without a relevant judgement);
* recall = relevant documents in the top min(k, run length) / relevant documents; precision = the
  same hits / k; MRR = 1 / rank of the first relevant document in the top k, else 0.

A query is given as the grades of its ranked documents (0 where a document is not relevant) and
the grades of its relevant judgements; queries without a relevant judgement score 0.
"""

from __future__ import annotations

import math

import numpy as np

FAMILIES = ("ndcg", "mrr", "recall", "precision", "hits")


def _discounts(k: int) -> np.ndarray:
    # libm's log2, as numba's np.log2 calls it (numpy's own SIMD log2 may round the last bit differently)
    return np.array([math.log2(i + 2) for i in range(k)], dtype=np.float64)


def _dcg(gains: np.ndarray, cut: np.ndarray) -> np.ndarray:
    """Left-to-right sum of gains[:, i] / log2(i + 2) for i < cut (per row)."""
    total = np.zeros(len(gains), dtype=np.float64)
    discount = _discounts(gains.shape[1])
    for i in range(gains.shape[1]):
        total = np.where(i < cut, total + gains[:, i] / discount[i], total)
    return total


def rank_metrics(ranked_grades: np.ndarray, run_lengths: np.ndarray, ideal_grades: np.ndarray,
                 names) -> dict[str, np.ndarray]:
    """Per-query values of ``names`` (``family@k``, families in FAMILIES).

    ``ranked_grades`` (nq, K): the grade of each ranked document, 0 where not relevant or past
    the run's end; ``run_lengths`` (nq,): documents each query's run holds; ``ideal_grades``
    (nq, J): each query's relevant grades sorted best first, 0-padded."""
    ranked_grades = np.asarray(ranked_grades, dtype=np.float64)
    ideal_grades = np.asarray(ideal_grades, dtype=np.float64)
    run_lengths = np.asarray(run_lengths, dtype=np.int64)
    n_relevant = (ideal_grades >= 1).sum(axis=1)
    judged = n_relevant > 0
    hit = ranked_grades >= 1
    out = {}
    for name in names:
        family, _, cut = name.partition("@")
        if family not in FAMILIES or not cut:
            raise ValueError(f"no native metric {name!r} (families: {', '.join(FAMILIES)}, each as family@k)")
        k = int(cut)
        upto = np.minimum(k, run_lengths)  # ranx's fix_k: a cutoff past the run's end is the run's end
        width = min(k, ranked_grades.shape[1])
        in_cut = np.arange(width)[None, :] < upto[:, None]
        hit_in_cut = hit[:, :width] & in_cut
        hits = hit_in_cut.sum(axis=1).astype(np.float64)
        if family == "ndcg":
            dcg = _dcg(ranked_grades[:, :width], upto)
            ideal = _dcg(ideal_grades[:, :k], np.minimum(k, n_relevant))
            value = dcg / np.where(ideal == 0.0, 1.0, ideal)
        elif family == "recall":
            value = hits / np.maximum(n_relevant, 1)
        elif family == "precision":
            value = hits / k
        elif family == "hits":
            value = hits
        else:  # mrr
            first = np.where(hit_in_cut.any(axis=1), np.argmax(hit_in_cut, axis=1), -1)
            value = np.where(first >= 0, 1.0 / np.where(first >= 0, first + 1.0, 1.0), 0.0)
        out[name] = np.where(judged, value, 0.0)
    return out


def padded(rows: list[np.ndarray]) -> np.ndarray:
    """Ragged per-query arrays as one (n, longest) float64 array, 0-padded."""
    out = np.zeros((len(rows), max((len(r) for r in rows), default=0) or 1), dtype=np.float64)
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return out
