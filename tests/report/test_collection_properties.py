"""What a user measures of a collection before training (ehi.report.collection_properties), and the
gain set beside it (ehi.report.gain_properties), on collections whose answers are known by construction."""

import numpy as np
import pandas as pd
import pytest

from ehi.report.collection_properties import collection_properties, unexplained_variance
from ehi.report.gain_properties import best_gains, correlations, qps_ratio


def _two_topics(rng, per_topic=100, dim=16, noise=0.2):
    """Documents around two orthogonal directions, the first ``DUPLICATED`` of them copied once."""
    centres = np.eye(dim)[:2]
    docs = np.concatenate([c + noise * rng.standard_normal((per_topic, dim)) for c in centres])
    return np.concatenate([docs, docs[:DUPLICATED]]), centres


DUPLICATED = 5


def test_two_separate_topics_are_read_as_concentrated_lists_that_serve_their_queries():
    docs, centres = _two_topics(np.random.default_rng(0))
    unit = docs / np.linalg.norm(docs, axis=1, keepdims=True)
    queries = centres
    # each query's one relevant document: its exact nearest
    relevant = [{int(np.argmax(unit @ q)): 1} for q in queries]
    facts = collection_properties(docs, queries, relevant, n_lists=2)
    assert facts["split"] == "dev" and facts["n_queries"] == 2 and facts["n_lists"] == 2
    assert facts["exact_ndcg@10"] == pytest.approx(1.0) and facts["exact_recall@10"] == pytest.approx(1.0)
    assert facts["doc_neighbour_in_list"] == 1.0
    assert facts["query_top1_in_list"] == 1.0 and facts["relevant_in_list"] == 1.0
    # both copies of each duplicated document have a neighbour at cosine 1
    assert facts["near_duplicate"] == pytest.approx(2 * DUPLICATED / len(docs))
    # k-means finds the two topics: the variance left is that within them
    topic = np.r_[np.zeros(100), np.ones(100), np.zeros(DUPLICATED)].astype(np.int64)
    assert facts["kmeans_unexplained"] == pytest.approx(unexplained_variance(unit, topic), rel=1e-4)


def test_unexplained_variance_is_one_for_a_single_list_and_zero_for_lists_on_their_points():
    x = np.random.default_rng(1).standard_normal((50, 4))
    assert unexplained_variance(x, np.zeros(50, dtype=np.int64)) == pytest.approx(1.0)
    assert unexplained_variance(x, np.arange(50)) == pytest.approx(0.0, abs=1e-9)


def _gains(dataset, asymmetry, rows):
    return pd.DataFrame([{"dataset": dataset, "n_docs": 1000, "leaves": 30, "train_queries_per_leaf": 2.0,
                          "asymmetry": asymmetry, "metric": "ndcg@10", "tree": tree, "ivf": ivf, "budget": budget,
                          "gain": gain} for tree, ivf, budget, gain in rows])


def test_the_best_tree_is_read_against_ivf_with_as_many_lists_else_the_tuned_ivf():
    gains = pd.concat([
        _gains("world", 0.0, [("a", "pre+ivf-lists", 0.05, 0.01), ("b", "pre+ivf-lists", 0.05, 0.03),
                              ("b", "ehi+faiss-ivf", 0.05, 0.09)]),
        _gains("small", np.nan, [("a", "ehi+faiss-ivf", 0.5, -0.02), ("b", "ehi+faiss-ivf", 0.5, -0.01)]),
    ])
    table = best_gains(gains).set_index("dataset")
    assert table.loc["world", "gain@5%"] == 0.03 and table.loc["world", "tree"] == "b"
    assert table.loc["world", "kind"] == "synthetic" and table.loc["small", "kind"] == "real"
    assert table.loc["small", "control"] == "ehi+faiss-ivf" and table.loc["small", "gain@50%"] == -0.01
    assert np.isnan(table.loc["small", "gain@5%"])


def test_the_qps_ratio_is_the_best_flat_tree_against_the_peer_it_fares_worst_against():
    matched = pd.DataFrame([
        {"ehi": "t1", "peer": "ivf", "metric": "ndcg@10", "target_share": 0.95, "qps_ratio": 4.0},
        {"ehi": "t1", "peer": "hnsw", "metric": "ndcg@10", "target_share": 0.95, "qps_ratio": 0.5},
        {"ehi": "t2", "peer": "scann", "metric": "ndcg@10", "target_share": 0.95, "qps_ratio": 0.8},
        {"ehi": "t2-pq", "peer": "ivfpq", "metric": "ndcg@10", "target_share": 0.95, "qps_ratio": 9.0},
        {"ehi": "t2", "peer": "scann", "metric": "ndcg@10", "target_share": 0.9, "qps_ratio": 7.0},
    ])
    assert qps_ratio(matched) == (0.8, "scann")


def test_a_correlation_is_given_only_over_enough_points_that_vary():
    table = pd.DataFrame({"kind": ["real", "synthetic", "synthetic", "synthetic"],
                          "gain@5%": [0.1, 0.2, 0.3, np.nan], "exact_ndcg@10": [0.1, 0.2, 0.4, 0.5]})
    for name in ("exact_recall@10", "train_queries_per_leaf", "kmeans_unexplained", "doc_neighbour_in_list",
                 "query_top1_in_list", "relevant_in_list", "near_duplicate"):
        table[name] = np.nan
    rows = correlations(table).set_index("property")
    assert rows.loc["exact_ndcg@10", "n_all"] == 3 and rows.loc["exact_ndcg@10", "spearman_all"] == pytest.approx(1.0)
    assert rows.loc["exact_ndcg@10", "n_real"] == 1 and np.isnan(rows.loc["exact_ndcg@10", "spearman_real"])
    assert rows.loc["near_duplicate", "n_all"] == 0
