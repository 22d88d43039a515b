"""Relevance <= 0 is not relevant, in validation, training, tuning and evaluation alike; negative
grades are counted; a split without one relevant judgement is refused when the data is prepared."""

import logging

import numpy as np
import pandas as pd
import pytest

from ehi.data.beir import load_beir
from ehi.data.judgements import judged_query_ids, judgement_counts, relevant
from ehi.data.validate import DataError
from tests.data.test_beir import write_beir

# q0: one relevant document and a negative one; q1: judged, but not relevant (0) to anything
QRELS = {"train": [("q0", "d0", 2), ("q0", "d1", -1), ("q1", "d2", 0), ("q3", "d4", 1)], "test": [("q2", "d3", 1)]}


@pytest.fixture()
def graded(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="ehi.data"):
        ds = load_beir(write_beir(tmp_path / "graded", qrels=QRELS))
    return ds, caplog.text


def test_negative_and_zero_judgements_are_kept_counted_and_reported(graded):
    ds, log = graded
    assert "train.tsv: 1 judgement(s) with negative relevance, counted as not relevant" in log
    assert "train.tsv: 1 query(ies) with no relevant judgement (relevance <= 0 only) stay in split 'train'" in log
    assert "e.g. 'q1'" in log
    assert sorted(ds.qrels.relevance) == [-1, 0, 1, 1, 2]  # kept as data, never dropped
    assert judgement_counts(ds.qrels) == {"relevant": 3, "zero": 1, "negative": 1, "queries_without_relevant": 1}
    assert judged_query_ids(ds.qrels) == {"q0", "q2", "q3"} and set(relevant(ds.qrels).doc_id) == {"d0", "d3", "d4"}


@pytest.mark.parametrize("grades", [[0], [0, -1], [-2]])
def test_a_split_without_a_relevant_judgement_is_refused_at_preparation(tmp_path, grades):
    qrels = {"train": [("q0", "d0", 1)], "test": [("q2", f"d{i}", g) for i, g in enumerate(grades)]}
    with pytest.raises(DataError, match=r"qrels/test\.tsv: split 'test' has no relevant judgement \(relevance >= 1"):
        load_beir(write_beir(tmp_path / "zero", qrels=qrels))


def test_training_pairs_and_excluded_negatives_use_relevant_judgements_only(graded):
    from ehi.train.batches import TrainData

    ds, _ = graded
    data = TrainData.from_dataset(ds, "train")
    row_of = {d: i for i, d in enumerate(ds.corpus.doc_id)}
    pairs = {(data.query_ids[q], int(d)) for q, d in zip(data.pair_q, data.pair_d)}
    assert pairs == {("q0", row_of["d0"]), ("q3", row_of["d4"])}  # q1 (relevance 0 only) is not trained on
    assert data.relevant[data.query_ids.index("q0")].tolist() == [row_of["d0"]]  # d1 (-1) may be a negative


def test_tuning_and_evaluation_see_the_same_judged_queries(graded):
    from ehi.evaluate.metrics import per_query_metrics
    from ehi.evaluate.sweep import split_rows
    from ehi.evaluate.xmc import label_matrix

    ds, _ = graded
    assert ds.queries.query_id.to_numpy()[split_rows(ds, "train")].tolist() == ["q0", "q3"]
    _, qrels = ds.split("train")
    # q0's run puts its negative document first, its relevant one second
    run = pd.DataFrame({"query_id": ["q0", "q0", "q1", "q3"], "doc_id": ["d1", "d0", "d2", "d4"], "rank": [1, 2, 1, 1],
                        "score": np.float32(0), "system": "s", "variant": "main", "budget_param": "b",
                        "budget_value": 1.0, "n_scored": 5})
    per_query = per_query_metrics(run, qrels, "graded", 5, ["recall@10", "mrr@10", "ndcg@10"])
    values = per_query.set_index(["query_id", "metric"]).value
    assert set(per_query.query_id) == {"q0", "q3"}  # q1 has nothing relevant to find: not evaluated
    assert values["q0", "recall@10"] == 1.0 and values["q0", "mrr@10"] == 0.5
    assert values["q0", "ndcg@10"] == pytest.approx(1 / np.log2(3))  # d1's -1 neither gains nor costs
    labels = label_matrix(qrels, ["q0", "q1", "q3"], ds.corpus.doc_id)
    assert labels.sum(1).A.ravel().tolist() == [1, 0, 1]
