"""The world-fit facts: geometry of vectors and the shape of KMR curves, on hand-made inputs."""

import numpy as np
import pandas as pd
import pytest

from ehi.report.world_fit import geometry, hnsw_lead, kmr_shape, world_fit_markdown, world_fit_table


def test_geometry_reads_nearest_and_relevant_cosines():
    docs = np.array([[1, 0], [0, 1], [-1, 0]], dtype=np.float32)
    queries = np.array([[1, 0.1], [0.1, 1]], dtype=np.float32)
    facts = geometry(docs, queries, [np.array([0]), np.array([2])])
    assert facts["top1_relevant"] == pytest.approx(0.5)  # the first query's nearest is relevant, the second's not
    assert facts["relevant_gap_median"] > 0  # the second query's relevant document is far behind its nearest
    assert facts["n_docs"] == 3 and facts["dim"] == 2
    assert -1 <= facts["doc_pair_cos_mean"] <= 1


def summary(rows):
    return pd.DataFrame([{"dataset": "d", "variant": "main", "metric": "ndcg@10", "system": s, "frac_visited": f,
                          "frac_work": f, "value": v} for s, f, v in rows])


def test_kmr_shape_reads_each_budget_at_the_largest_point_within_it():
    table = kmr_shape(summary([("pre+exact", 1.0, 0.5), ("ehi+faiss-ivf", 0.008, 0.25), ("ehi+faiss-ivf", 0.04, 0.4),
                               ("ehi+faiss-hnsw", 0.009, 0.45), ("ehi+tree", 0.03, 0.55)]))
    ivf = table[table.method == "faiss-ivf"].iloc[0]
    assert ivf["share@0.01"] == pytest.approx(0.5) and ivf["share@0.05"] == pytest.approx(0.8)
    tree = table[table.method == "tree"].iloc[0]
    assert np.isnan(tree["share@0.01"]) and tree["share@0.05"] == pytest.approx(1.1)  # above exact search
    lead = hnsw_lead(table)
    assert lead["hnsw_lead@0.01"] == pytest.approx(0.9 - 0.5)


def test_kmr_shape_needs_exact_search():
    with pytest.raises(ValueError, match="exact"):
        kmr_shape(summary([("ehi+faiss-ivf", 0.01, 0.2)]))


def test_world_fit_table_sets_datasets_side_by_side():
    shape = kmr_shape(summary([("pre+exact", 1.0, 0.5), ("ehi+faiss-ivf", 0.01, 0.25), ("ehi+faiss-hnsw", 0.01, 0.45)]))
    table = world_fit_table({"a": {"n_docs": 3}, "b": {"n_docs": 4}}, {"a": shape, "b": shape})
    assert table.dataset.tolist() == ["a", "b"]
    assert table["faiss-ivf_share@0.01"].tolist() == pytest.approx([0.5, 0.5])
    assert "hnsw_lead@0.01" in world_fit_markdown(table)
