"""Choose each baseline's build parameters on dev queries, never on test.

The criterion is label-free and matches how the paper compares systems: for every candidate build,
sweep its budget on the dev queries and measure neighbour recall@k (the share of exact search's
top-k that the index returns); read it, KMR-style, at the largest sweep point whose mean fraction
scored is not above each target budget (0 if none is); the score is the mean over the targets, a
discrete area under the recall-vs-fraction curve at the budgets the tables report. Ties go to the
earlier (cheaper) grid entry. With ``cost="work"`` the fraction read is of work, documents plus the
centroids routing scores (:mod:`ehi.core.work`), so a finer list count pays for its routing.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from ehi.core.work import fraction_of_work
from ehi.search.base import as_matrix, at_budget
from ehi.search.faiss_ann import FlatSearcher
from ehi.search.registry import ann_kind, build_searcher

TUNE_TARGETS = (0.01, 0.02, 0.05, 0.1, 0.2)


def default_grid(kind: str, n_docs: int, settings=None) -> list[dict]:
    """Build settings worth trying for ``kind`` (its registry entry's grid): the sqrt(N) rule from
    halved to x4 for list and partition counts, the HNSW usual suspects; ``settings`` (a
    :class:`~ehi.search.config.SearchConfig`) narrows them to the config's own lists."""
    return ann_kind(kind).grid(n_docs, settings)


def neighbor_recall(rows: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Per query, the share of ``truth``'s ids (nq, k) found among ``rows`` (nq, k'); -1 never matches.

    Without padding and with k' = k its mean is faiss's ``knn_intersection_measure`` (a test checks
    it); kept here for the padded rows (HNSW below efSearch = k, IVF with few probes) that faiss's
    measure would count as a match of two -1 entries.
    """
    hits = [len(np.intersect1d(r[r >= 0], t[t >= 0])) / max(1, int((t >= 0).sum())) for r, t in zip(rows, truth)]
    return np.asarray(hits, dtype=np.float64)


def score_curve(frac: np.ndarray, recall: np.ndarray, targets=TUNE_TARGETS) -> float:
    """Mean over targets of the recall at the target (:func:`~ehi.search.base.at_budget`; 0 if no point is that cheap)."""
    recall = np.asarray(recall)
    at = [at_budget(frac, t) for t in targets]
    return float(np.mean([0.0 if i is None else recall[i] for i in at]))


def tune_on_dev(
    kind: str,
    doc_emb: np.ndarray,
    dev_query_emb: np.ndarray,
    grid: list[dict] | None = None,
    k: int = 10,
    targets=TUNE_TARGETS,
    cost: str = "documents",
) -> tuple[dict, pd.DataFrame]:
    """Best build parameters for ``kind`` and the dev curve of every candidate.

    Returns ``(best_params, curves)``; ``curves`` has one row per (candidate, budget) with columns
    params (JSON), budget_param, budget_value, frac_visited, frac_work, recall, score.
    """
    if cost not in ("documents", "work"):
        raise ValueError(f"cost must be 'documents' or 'work', got {cost!r}")
    doc_emb, queries = as_matrix(doc_emb), as_matrix(dev_query_emb)
    truth = FlatSearcher.build(doc_emb).search_ids(queries, k)[0]
    grid = default_grid(kind, len(doc_emb)) if grid is None else grid
    frames = []
    for params in grid:
        searcher = build_searcher(kind, doc_emb, **params)
        points = []
        for budget in searcher.default_sweep():
            rows, _, n_scored = searcher.search(queries, k, budget)
            points.append((budget, n_scored.mean() / len(doc_emb),
                           float(fraction_of_work(n_scored.mean(), searcher.routing_units(budget), len(doc_emb))),
                           neighbor_recall(rows, truth).mean()))
        curve = pd.DataFrame(points, columns=["budget_value", "frac_visited", "frac_work", "recall"])
        curve.insert(0, "params", json.dumps(params, sort_keys=True))
        curve.insert(1, "budget_param", searcher.budget_param)
        frac = curve.frac_work if cost == "work" else curve.frac_visited
        curve["score"] = score_curve(frac, curve.recall, targets)
        frames.append(curve)
    curves = pd.concat(frames, ignore_index=True)
    scores = curves.groupby("params", sort=False).score.first()
    best = json.loads(scores.index[int(np.argmax(scores.to_numpy()))])
    return best, curves
