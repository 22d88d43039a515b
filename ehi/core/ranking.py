"""The two rules every stage reads rankings by, below the stages so that training's dev selection
and the evaluation share them: which point of a measured curve stands for a budget, and the ranx
metrics of ranked document rows."""

from __future__ import annotations

import numpy as np


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
    same ranx computation as :func:`ehi.evaluate.metrics.per_query_metrics` (graded gains, the order given is the
    ranking), for what works on rows rather than run tables: dev selection, the dev screens. A
    query with no relevant row counts 0."""
    from ranx import Qrels, Run, evaluate

    graded = [dict(r) if isinstance(r, dict) else {int(d): 1 for d in np.asarray(r)} for r in relevant]
    judged = [i for i, g in enumerate(graded) if any(v >= 1 for v in g.values())]
    names = list(metrics)
    if not judged:
        return {m: 0.0 for m in names}
    qrels = Qrels({str(i): {str(d): int(v) for d, v in graded[i].items() if v >= 1} for i in judged})
    run = {}
    for i in judged:
        row = np.asarray(ranked[i])
        row = row[row >= 0]
        run[str(i)] = {str(int(d)): -float(r) for r, d in enumerate(row)} or {"-1": 0.0}  # ranx needs a doc
    values = evaluate(qrels, Run(run), names, return_mean=False, make_comparable=True)
    values = values if isinstance(values, dict) else {names[0]: values}
    return {m: float(np.sum(values[m]) / len(ranked)) for m in names}
