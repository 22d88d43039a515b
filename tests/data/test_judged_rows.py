"""Dataset.judged_rows: what the rules that measure a split's vectors (geometry, collection
properties) read of its judgements, in one place."""

import pandas as pd

from ehi.data.dataset import Dataset


def test_a_splits_judged_queries_in_order_with_their_relevant_rows_and_grades():
    corpus = pd.DataFrame({"doc_id": ["a", "b", "c"], "title": "", "text": "t"})
    queries = pd.DataFrame({"query_id": ["q0", "q1", "q2", "q3"], "text": "t", "split": ["dev", "test", "dev", "dev"]})
    qrels = pd.DataFrame({"query_id": ["q2", "q2", "q0", "q1", "q3"], "doc_id": ["c", "a", "b", "a", "c"],
                          "relevance": [2, 1, 1, 1, 0], "split": ["dev", "dev", "dev", "test", "dev"]})
    rows, relevant = Dataset("d", corpus, queries, qrels).judged_rows("dev")
    # q3's only judgement is not relevant: not judged; q1 is another split's
    assert rows == [0, 2] and relevant == [{1: 1}, {2: 2, 0: 1}]
    assert list(relevant[1]) == [2, 0]  # qrels order
