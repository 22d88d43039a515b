"""XMC metrics against hand-computed values: PSP@k (ehi.evaluate.xmc), and P@k / nDCG@k on binary
labels as the pipeline computes them (ehi.evaluate.metrics.per_query_metrics) under the
repository's conventions."""

import math

import numpy as np
import pandas as pd
import pytest

from ehi.data.dataset import Dataset
from ehi.evaluate.metrics import per_query_metrics, run_frame
from ehi.evaluate.xmc import inverse_propensity, label_matrix, psp_at_k, train_inverse_propensity

# two queries, five labels: q0's labels {0, 2}, q1's label {4}
LABELS = np.array([[1, 0, 1, 0, 0], [0, 0, 0, 0, 1]])
RANKED = np.array([[2, 1, 0, 4, 3], [0, 4, -1, -1, -1]])
INV_PROP = np.array([1.0, 2.0, 4.0, 1.0, 3.0])
LABEL_IDS = [f"l{j}" for j in range(5)]


@pytest.mark.filterwarnings("ignore:unsafe cast")  # a numba note from inside ranx
def test_precision_and_ndcg_of_the_pipeline_hand_computed():
    run = run_frame(["q0", "q1"], LABEL_IDS, RANKED, -np.arange(5.0)[None].repeat(2, 0), "ehi+exact", "main",
                    "exact", 1.0, [5, 5])
    qrels = pd.DataFrame([(f"q{i}", LABEL_IDS[j], 1) for i, row in enumerate(LABELS) for j in np.flatnonzero(row)],
                         columns=["query_id", "doc_id", "relevance"])
    names = ["precision@1", "precision@3", "precision@5", "ndcg@1", "ndcg@3", "ndcg@5"]
    frame = per_query_metrics(run, qrels, "toy", 5, names)
    m = {name: group.set_index("query_id").value.loc[["q0", "q1"]].to_numpy()
         for name, group in frame.groupby("metric")}
    np.testing.assert_allclose(m["precision@1"], [1, 0])
    np.testing.assert_allclose(m["precision@3"], [2 / 3, 1 / 3])
    np.testing.assert_allclose(m["precision@5"], [2 / 5, 1 / 5])  # q1's short list: the missing ranks are misses
    # q0: hits at ranks 1, 3 -> (1 + 1/log2 4) / (1 + 1/log2 3); q1: hit at rank 2 -> 1/log2 3
    ideal2 = 1 + 1 / math.log2(3)
    np.testing.assert_allclose(m["ndcg@1"], [1, 0])
    np.testing.assert_allclose(m["ndcg@3"], [1.5 / ideal2, 1 / math.log2(3)])
    np.testing.assert_allclose(m["ndcg@5"], [1.5 / ideal2, 1 / math.log2(3)])


def test_psp_hand_computed_and_normalised_like_the_repository():
    m = psp_at_k(RANKED, LABELS, INV_PROP, ks=(1, 5))
    # PSP@1: raw q0 = 4 (label 2), q1 = 0; best q0 = 4, q1 = 3 -> repository value (4+0)/(4+3)
    assert m["psp@1"].mean() == pytest.approx(4 / 7)
    np.testing.assert_allclose(m["psp@1"], [4 / 3.5, 0])  # per query: raw / mean(best)
    # PSP@5: every true label is retrieved, so the value is 1
    assert m["psp@5"].mean() == pytest.approx(1.0)


def test_inverse_propensity_hand_computed():
    # N = 100, N_l = 10, A = 0.6, B = 2.6: C = (ln 100 - 1) 3.6^0.6 = 7.7751, 1 + C 12.6^-0.6 = 2.7001
    assert inverse_propensity(np.array([10]), 100)[0] == pytest.approx(2.70014, abs=1e-5)
    w = inverse_propensity(np.array([0, 1, 10, 1000]), 5000)
    assert (np.diff(w) < 0).all() and (w > 1).all()  # rarer labels weigh more, never below 1


def test_psp_of_short_lists_and_queries_without_labels():
    m = psp_at_k(np.array([[1], [0]]), np.array([[0, 1], [0, 0]]), np.array([1.0, 2.0]), ks=(1, 3))
    # q0's one hit at rank 1 (1/p = 2) over its best (the same label): raw 2/k, best 2/k, mean best over 2 queries
    np.testing.assert_allclose(m["psp@3"], [(2 / 3) / (1 / 3), 0])  # the missing ranks are misses; no labels: 0
    with pytest.raises(ValueError, match="ranked lists"):
        psp_at_k(RANKED, LABELS[:1], INV_PROP)


def test_label_matrix_and_train_propensities_of_a_dataset():
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
    inv_prop = train_inverse_propensity(ds)
    np.testing.assert_allclose(inv_prop, inverse_propensity(np.array([3, 1, 0]), 3))
    test_labels = label_matrix(qrels[qrels.split == "test"], ["s1"], corpus.doc_id)
    # train frequencies a: 3, b: 1, c: 0 with N = 3 -> c is the rarest; PSP@1 hits it: raw = best
    assert psp_at_k(np.array([[2, 0, 1]]), test_labels, inv_prop, ks=(1, 3))["psp@1"][0] == pytest.approx(1.0)
