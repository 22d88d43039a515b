"""The two rules every stage reads rankings by, below the stages so that training's dev selection
and the evaluation share them: which point of a measured curve stands for a budget, and the
metrics of ranked document rows; and ``GROUP``, the columns that name one search of a run (here
so that ``ehi search``'s TREC output needs none of the evaluation's libraries)."""

from __future__ import annotations

import numpy as np

from ehi.core.rank_metrics import padded, rank_metrics

GROUP = ["system", "variant", "budget_param", "budget_value"]  # one search = one point of a curve


BUDGET_RTOL = 1e-9  # a fraction equal to the target but for float rounding is within it


def at_budget(frac, target: float, cheapest_if_none: bool = False) -> int | None:
    """The point a system is read at for a budget: the position of the largest mean fraction
    scored not above ``target``; among equal fractions the last (a sweep in budget order: the
    larger budget value). ``None`` when no point is that cheap, or with ``cheapest_if_none`` the
    cheapest point. Every table, tuning score and dev figure "at a budget" reads its point here."""
    frac = np.asarray(frac, dtype=np.float64)
    within = np.flatnonzero(frac <= target * (1 + BUDGET_RTOL))
    if len(within):
        return int(within[np.flatnonzero(frac[within] == frac[within].max())[-1]])
    return int(np.argmin(frac)) if cheapest_if_none and len(frac) else None


def ranked_rows_metrics(ranked: np.ndarray, relevant, metrics=("ndcg@10", "recall@100")) -> dict[str, float]:
    """Mean ``metrics`` of ranked doc rows (n, K; -1 = no document, best first) against each
    query's judged rows: an array of relevant rows (grade 1) or a ``{row: grade}`` mapping. The
    same computation as :func:`ehi.evaluate.metrics.per_query_metrics` (ranx's formulas, graded
    gains, the order given is the ranking: :mod:`ehi.core.rank_metrics`), for what works on rows
    rather than run tables: dev selection, the dev screens. A query with no relevant row counts 0."""
    graded = [dict(r) if isinstance(r, dict) else {int(d): 1 for d in np.asarray(r)} for r in relevant]
    graded = [{int(d): int(v) for d, v in g.items() if v >= 1} for g in graded]
    names = list(metrics)
    # summed in ranx's query order (ids as sorted strings), so the mean is ranx's to the last bit
    judged = sorted((i for i, g in enumerate(graded) if g), key=str)
    if not judged:
        return {m: 0.0 for m in names}
    rows = []
    for i in judged:
        row = np.asarray(ranked[i])
        rows.append(row[row >= 0])
    lengths = np.array([max(len(r), 1) for r in rows])  # ranx needs a document: an empty row holds one dummy
    grades = padded([np.array([graded[i].get(int(d), 0) for d in r], dtype=np.float64) for i, r in zip(judged, rows)])
    ideal = padded([np.sort(np.array(list(graded[i].values()), dtype=np.float64))[::-1] for i in judged])
    values = rank_metrics(grades, lengths, ideal, names)
    return {m: float(np.sum(values[m]) / len(ranked)) for m in names}
