"""Dev selection scores rankings with the evaluation's metrics: trec_eval's binary formulas where
the judgements are binary, ranx's graded gains (as the reported tables) where they are graded."""

import numpy as np
import pandas as pd
import pytest

from ehi.evaluate.metrics import per_query_metrics
from ehi.train.dev_eval import ranking_metrics, top_rows


def _binary_by_hand(ranked, relevant):
    """nDCG@10 (log2 discounts) and Recall@100 on binary labels, written out."""
    discounts = 1.0 / np.log2(np.arange(2, 12))
    ndcg, recall = [], []
    for row, rel in zip(ranked, relevant):
        hit = np.isin(row, rel) & (row >= 0)
        ideal = discounts[: min(len(rel), 10)].sum()
        ndcg.append((hit[:10] * discounts[: len(hit[:10])]).sum() / ideal if ideal else 0.0)
        recall.append(hit[:100].sum() / len(rel) if len(rel) else 0.0)
    return {"ndcg@10": float(np.mean(ndcg)), "recall@100": float(np.mean(recall))}


def _ranking(seed=0, n_queries=30, n_docs=400):
    rng = np.random.default_rng(seed)
    ranked = top_rows(rng.standard_normal((n_queries, n_docs)))
    ranked[3, 40:] = -1  # a short list
    relevant = [np.sort(rng.choice(n_docs, rng.integers(1, 6), replace=False)) for _ in range(n_queries)]
    unranked = np.setdiff1d(np.arange(n_docs), ranked[5])[0]
    relevant[5] = np.array([ranked[5, 0], ranked[5, 2], unranked])  # hits at ranks 1 and 3, one never ranked
    return ranked, relevant


def test_binary_judgements_give_the_trec_eval_values():
    ranked, relevant = _ranking()
    got, want = ranking_metrics(ranked, relevant), _binary_by_hand(ranked, relevant)
    assert got == pytest.approx(want, abs=1e-12)
    graded_as_ones = [{int(d): 1 for d in r} for r in relevant]
    assert ranking_metrics(ranked, graded_as_ones) == pytest.approx(want, abs=1e-12)


def test_graded_judgements_give_the_reported_metrics():
    ranked, relevant = _ranking(seed=1)
    rng = np.random.default_rng(2)
    graded = [{int(d): int(rng.integers(1, 4)) for d in r} for r in relevant]
    got = ranking_metrics(ranked, graded)
    run = pd.DataFrame([{"query_id": f"q{i}", "doc_id": f"d{d}", "rank": r + 1, "score": -r, "system": "s",
                         "variant": "main", "budget_param": "exact", "budget_value": 0.0, "n_scored": 400}
                        for i, row in enumerate(ranked) for r, d in enumerate(row) if d >= 0])
    qrels = pd.DataFrame([{"query_id": f"q{i}", "doc_id": f"d{d}", "relevance": g, "split": "test"}
                          for i, rel in enumerate(graded) for d, g in rel.items()])
    reported = per_query_metrics(run, qrels, "toy", 400, metrics=("ndcg@10", "recall@100"))
    means = reported.groupby("metric").value.mean()
    assert got["ndcg@10"] == pytest.approx(means["ndcg@10"], abs=1e-12)
    assert got["recall@100"] == pytest.approx(means["recall@100"], abs=1e-12)
    assert got["ndcg@10"] != pytest.approx(_binary_by_hand(ranked, relevant)["ndcg@10"], abs=1e-6)


def test_visited_top_rows_equals_masking_the_full_score_matrix():
    """Scoring the visited leaves' documents only ranks as masking every other document of the full
    (n, N) matrix did, -1 padding included where fewer than k documents were visited."""
    from ehi.train.dev_eval import exact_top_rows, top_rows, visited_top_rows

    rng = np.random.default_rng(0)
    docs, queries = rng.normal(size=(500, 16)).astype(np.float32), rng.normal(size=(40, 16)).astype(np.float32)
    doc_leaf = rng.integers(0, 25, size=500)
    leaves = np.stack([rng.choice(25, size=3, replace=False) for _ in range(40)])
    scores = queries @ docs.T
    masked = np.where(np.stack([np.isin(doc_leaf, row) for row in leaves]), scores, -np.inf)
    np.testing.assert_array_equal(visited_top_rows(queries, docs, doc_leaf, leaves, k=100), top_rows(masked, 100))
    np.testing.assert_array_equal(exact_top_rows(queries, docs, k=100), top_rows(scores, 100))
