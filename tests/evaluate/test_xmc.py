"""XMC metrics against hand-computed values (and ranx for P@k / nDCG@k on binary labels)."""

import math

import numpy as np
import pandas as pd
import pytest

from ehi.data.dataset import Dataset
from ehi.evaluate.xmc import evaluate_xmc, inverse_propensity, label_matrix, per_query_frame, summarize, xmc_metrics

# two queries, five labels: q0's labels {0, 2}, q1's label {4}
LABELS = np.array([[1, 0, 1, 0, 0], [0, 0, 0, 0, 1]])
RANKED = np.array([[2, 1, 0, 4, 3], [0, 4, -1, -1, -1]])
INV_PROP = np.array([1.0, 2.0, 4.0, 1.0, 3.0])


def test_precision_and_ndcg_hand_computed():
    m = xmc_metrics(RANKED, LABELS)
    np.testing.assert_allclose(m["p@1"], [1, 0])
    np.testing.assert_allclose(m["p@3"], [2 / 3, 1 / 3])
    np.testing.assert_allclose(m["p@5"], [2 / 5, 1 / 5])
    # q0: hits at ranks 1, 3 -> (1 + 1/log2 4) / (1 + 1/log2 3); q1: hit at rank 2 -> 1/log2 3
    ideal2 = 1 + 1 / math.log2(3)
    np.testing.assert_allclose(m["ndcg@1"], [1, 0])
    np.testing.assert_allclose(m["ndcg@3"], [1.5 / ideal2, 1 / math.log2(3)])
    np.testing.assert_allclose(m["ndcg@5"], [1.5 / ideal2, 1 / math.log2(3)])
    assert summarize(m)["p@3"] == pytest.approx(0.5)


def test_psp_hand_computed_and_normalised_like_the_repository():
    m = xmc_metrics(RANKED, LABELS, INV_PROP, ks=(1, 5))
    # PSP@1: raw q0 = 4 (label 2), q1 = 0; best q0 = 4, q1 = 3 -> repository value (4+0)/(4+3)
    assert summarize(m)["psp@1"] == pytest.approx(4 / 7)
    np.testing.assert_allclose(m["psp@1"], [4 / 3.5, 0])  # per query: raw / mean(best)
    # PSP@5: every true label is retrieved, so the value is 1
    assert summarize(m)["psp@5"] == pytest.approx(1.0)


def test_inverse_propensity_hand_computed():
    # N = 100, N_l = 10, A = 0.6, B = 2.6: C = (ln 100 - 1) 3.6^0.6 = 7.7751, 1 + C 12.6^-0.6 = 2.7001
    assert inverse_propensity(np.array([10]), 100)[0] == pytest.approx(2.70014, abs=1e-5)
    w = inverse_propensity(np.array([0, 1, 10, 1000]), 5000)
    assert (np.diff(w) < 0).all() and (w > 1).all()  # rarer labels weigh more, never below 1


def test_short_lists_and_queries_without_labels():
    m = xmc_metrics(np.array([[1], [0]]), np.array([[0, 1], [0, 0]]), ks=(1, 3))
    np.testing.assert_allclose(m["p@3"], [1 / 3, 0])  # the missing ranks are misses
    np.testing.assert_allclose(m["ndcg@3"], [1, 0])  # no labels: 0, not NaN
    with pytest.raises(ValueError, match="ranked lists"):
        xmc_metrics(RANKED, LABELS[:1])


@pytest.mark.filterwarnings("ignore:unsafe cast")  # a numba note from inside ranx
def test_matches_ranx_on_binary_labels():
    from ranx import Qrels, Run, evaluate

    rng = np.random.default_rng(0)
    labels = rng.random((20, 30)) < 0.1
    labels[np.arange(20), rng.integers(0, 30, 20)] = True
    ranked = np.stack([rng.permutation(30)[:5] for _ in range(20)])
    m = summarize(xmc_metrics(ranked, labels, ks=(1, 3, 5)))
    qrels = Qrels({f"q{i}": {f"l{j}": 1 for j in np.flatnonzero(row)} for i, row in enumerate(labels)})
    run = Run({f"q{i}": {f"l{j}": float(5 - r) for r, j in enumerate(row)} for i, row in enumerate(ranked)})
    want = evaluate(qrels, run, ["precision@1", "precision@3", "precision@5", "ndcg@3", "ndcg@5"])
    for ours, theirs in [("p@1", "precision@1"), ("p@3", "precision@3"), ("p@5", "precision@5"),
                         ("ndcg@3", "ndcg@3"), ("ndcg@5", "ndcg@5")]:
        assert m[ours] == pytest.approx(want[theirs], abs=1e-9)


def test_label_matrix_and_evaluate_xmc_on_a_dataset():
    corpus = pd.DataFrame({"doc_id": ["a", "b", "c"], "title": "", "text": ["x", "y", "z"]})
    queries = pd.DataFrame({"query_id": ["t1", "t2", "t3", "s1"], "text": "q",
                            "split": ["train", "train", "train", "test"]})
    qrels = pd.DataFrame({"query_id": ["t1", "t2", "t2", "t3", "s1", "s1", "zz"],
                          "doc_id": ["a", "a", "b", "a", "b", "c", "a"],
                          "relevance": [1, 1, 1, 1, 1, 1, 1],
                          "split": ["train"] * 4 + ["test"] * 3})
    mat = label_matrix(qrels[qrels.split == "train"], ["t1", "t2", "t3"], corpus.doc_id)
    np.testing.assert_array_equal(mat.toarray(), [[1, 0, 0], [1, 1, 0], [1, 0, 0]])
    ds = Dataset("toy", corpus, queries, qrels)
    m = evaluate_xmc(np.array([[2, 0, 1]]), ["s1"], ds, ks=(1, 3))
    assert m["p@1"][0] == 1 and m["p@3"][0] == pytest.approx(2 / 3)
    # train frequencies a: 3, b: 1, c: 0 with N = 3 -> c is the rarest; PSP@1 hits it: raw = best
    assert m["psp@1"][0] == pytest.approx(1.0)
    frame = per_query_frame(["s1"], m)
    assert set(frame.metric) == {"p@1", "p@3", "ndcg@1", "ndcg@3", "psp@1", "psp@3"}
