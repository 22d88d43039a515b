"""The trained-index benchmark's quality at one point of a sweep, on two kinds of truth.

Task quality: nDCG@10, Recall@10 and Recall@100 against the test queries' graded judgements (the
evaluation's ranx metrics). Fidelity to exact search on the same vectors: Recall@100 against exact
search's top 100 (``exact_recall@100``) and k-NN recall@10 (``knn_recall@10``), ann-benchmarks'
measure of an index.

k-NN recall@10 is computed as ann-benchmarks computes it (``knn`` in its plotting/metrics.py): of a
system's first 10 documents, the share whose distance to the query is at most the 10th exact
neighbour's plus ``KNN_EPSILON``, averaged over the test queries. Distances are recomputed from the
vectors, never read from the index, so that a compressed index's approximate scores do not grade
themselves. The distance is the negative inner product every index here ranks by; on unit vectors
it is ann-benchmarks' angular distance (1 - cosine) less a constant, so the slack means the same.
Without a tie within the slack at the 10th place, the value is |top 10 ∩ exact top 10| / 10; with
one, any of the tied documents counts, and so exact search scores 1.0 however it orders ties.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ehi.data.dataset import Dataset
from ehi.evaluate.metrics import ranked_rows_metrics
from ehi.search.tune import neighbor_recall

K = 100  # documents each system returns, and the depth of exact search's answer
KNN_AT = 10
KNN_EPSILON = 1e-3  # ann-benchmarks' default slack on the k-th distance
JUDGED = ("ndcg@10", "recall@10", "recall@100")  # the judgement-based metrics each point gets
METRICS = (*JUDGED, "exact_recall@100", f"knn_recall@{KNN_AT}")


def judged_rows(dataset: Dataset, rows: np.ndarray) -> list[dict[int, int]]:
    """Each query's (at ``rows`` of queries.parquet) judgements as ``{doc row: grade}``."""
    doc_row = pd.Series(np.arange(len(dataset.corpus)), index=dataset.corpus.doc_id.astype(str))
    qids = dataset.queries.query_id.astype(str).to_numpy()[rows]
    qrels = dataset.qrels[dataset.qrels.query_id.astype(str).isin(set(qids))]
    by_query = {q: {} for q in qids}
    for q, d, g in zip(qrels.query_id.astype(str), qrels.doc_id.astype(str), qrels.relevance):
        by_query[q][int(doc_row[d])] = int(g)
    return [by_query[q] for q in qids]


def exact_top(queries: np.ndarray, docs: np.ndarray, k: int = K, block: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """Exact search's top-``k`` rows of each query and their inner products, both (nq, k), in blocks
    of queries (a 10^6-wide score row each)."""
    rows, scores = [], []
    for i in range(0, len(queries), block):
        s = queries[i:i + block] @ docs.T  # (block, N)
        top = np.argsort(-s, axis=1, kind="stable")[:, :k]
        rows.append(top)
        scores.append(np.take_along_axis(s, top, axis=1))
    return np.concatenate(rows), np.concatenate(scores)


def knn_recall(rows: np.ndarray, queries: np.ndarray, docs: np.ndarray, exact_scores: np.ndarray,
               count: int = KNN_AT, epsilon: float = KNN_EPSILON) -> np.ndarray:
    """Per query, the share of ``rows``' first ``count`` documents (-1: none) within ``epsilon`` of
    the ``count``-th exact neighbour's distance (``exact_scores``: exact search's inner products,
    best first)."""
    top = np.asarray(rows)[:, :count]  # (nq, count)
    returned = top >= 0
    vectors = np.asarray(docs[np.where(returned, top, 0).ravel()]).reshape(*top.shape, -1)  # (nq, count, dim)
    scores = np.einsum("qd,qcd->qc", queries, vectors)
    threshold = np.asarray(exact_scores)[:, count - 1:count] - epsilon  # distance -s <= -s_k + epsilon
    return (returned & (scores >= threshold)).sum(axis=1) / count


def point_quality(rows: np.ndarray, judged: list[dict[int, int]], queries: np.ndarray, docs: np.ndarray,
                  exact: tuple[np.ndarray, np.ndarray]) -> dict[str, float]:
    """Every metric of :data:`METRICS` for one system's answer ``rows`` (nq, K) to ``queries``;
    ``exact`` is :func:`exact_top` of the same queries on the same ``docs``."""
    exact_rows, exact_scores = exact
    return {**ranked_rows_metrics(rows, judged, JUDGED),
            "exact_recall@100": float(neighbor_recall(rows, exact_rows).mean()),
            f"knn_recall@{KNN_AT}": float(knn_recall(rows, queries, docs, exact_scores).mean())}
