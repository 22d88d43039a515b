"""k-NN recall@10 of the trained-index benchmark against hand-made answers on vectors whose
distances to the query are known: documents on the unit circle, the query at angle 0."""

import numpy as np
import pandas as pd
import pytest

from benchmarks import trained_report
from benchmarks.trained_quality import KNN_EPSILON, exact_top, knn_recall

QUERY = np.array([[1.0, 0.0]], dtype=np.float32)


def _circle(angles) -> np.ndarray:
    """Unit vectors at ``angles``: their inner product with the query is cos(angle)."""
    angles = np.asarray(angles, dtype=np.float64)
    return np.stack([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)


def _recall(rows, docs) -> float:
    exact = exact_top(QUERY, docs, k=20)
    return float(knn_recall(np.asarray([rows]), QUERY, docs, exact[1]).mean())


def test_exact_search_has_knn_recall_one_and_a_known_subset_its_share():
    docs = _circle(np.linspace(0.0, 1.5, 30))  # 0.05 rad apart: no two within the slack
    exact_rows, exact_scores = exact_top(QUERY, docs, k=20)
    assert exact_rows[0, :10].tolist() == list(range(10))
    assert knn_recall(exact_rows, QUERY, docs, exact_scores).tolist() == [1.0]
    seven = [0, 1, 2, 3, 4, 5, 6, 20, 21, 22]  # 7 of the true 10, then three far documents
    assert _recall(seven, docs) == pytest.approx(0.7)
    assert _recall(seven[::-1], docs) == pytest.approx(0.7)  # the order within the 10 does not count
    assert _recall([10, 11, 12, 13, 14, 15, 16, 17, 18, 19], docs) == 0.0  # the next 10: none


def test_only_the_first_ten_count_and_padding_never_matches():
    docs = _circle(np.linspace(0.0, 1.5, 30))
    late = list(range(5, 15)) + list(range(5))  # the true top 5 returned at ranks 11-15
    assert _recall(late, docs) == pytest.approx(0.5)
    assert _recall([0, 1, 2, -1, -1, -1, -1, -1, -1, -1], docs) == pytest.approx(0.3)


def test_a_tie_at_the_tenth_place_counts_either_document():
    """ann-benchmarks grades by distance: a document within the slack of the 10th exact neighbour's
    distance is a true neighbour, so an exact search that orders a tie otherwise loses nothing."""
    angles = np.linspace(0.0, 1.5, 30)
    docs = _circle(np.append(angles, angles[9]))  # row 30 is row 9's twin
    swapped = [*range(9), 30]
    assert _recall(swapped, docs) == 1.0
    near = _circle(np.append(angles, np.arccos(np.cos(angles[9]) - KNN_EPSILON / 2)))
    assert _recall(swapped, near) == 1.0  # within the slack
    far = _circle(np.append(angles, np.arccos(np.cos(angles[9]) - 2 * KNN_EPSILON)))
    assert _recall(swapped, far) == pytest.approx(0.9)  # beyond it


def test_a_scaled_query_keeps_its_neighbours():
    """The distance is recomputed from the vectors (a query's norm scales every document's alike)."""
    docs = _circle(np.linspace(0.0, 1.5, 30))
    queries = np.concatenate([QUERY, 3 * QUERY])
    exact_rows, exact_scores = exact_top(queries, docs, k=20)
    rows = np.asarray([[*range(7), 20, 21, 22], list(range(10))])
    np.testing.assert_allclose(knn_recall(rows, queries, docs, exact_scores), [0.7, 1.0])


def test_the_report_matches_and_draws_systems_at_equal_knn_recall(tmp_path):
    """A tree and a peer with a known k-NN recall curve: the matched table has the new axis at each
    target with the QPS ratio read at the right points, and the figure gains a row for it."""
    def curve(system, knn, qps):
        return pd.DataFrame({"system": system, "budget_value": range(len(knn)), "knn_recall@10": knn, "qps": qps,
                             "ndcg@10": np.asarray(knn) / 2, "p50_ms": 1000 / np.asarray(qps),
                             "p99_ms": 2000 / np.asarray(qps), "frac_scored": np.linspace(0.1, 1, len(knn)),
                             "threads": 1})

    curves = pd.concat([curve("ehi+tree", [0.5, 0.92, 0.99], [400.0, 200.0, 100.0]),
                        curve("ehi+faiss-hnsw", [0.6, 0.96, 1.0], [300.0, 100.0, 10.0])], ignore_index=True)
    table = trained_report.matched(curves, metrics=("knn_recall@10",)).set_index("target_share")
    assert table.target.to_dict() == pytest.approx({0.9: 0.891, 0.95: 0.9405, 0.99: 0.9801})  # of the tree's 0.99
    assert table.qps_ratio.to_dict() == pytest.approx({0.9: 2.0, 0.95: 1.0, 0.99: 10.0})
    trained_report.write_outputs(curves, tmp_path, "toy")
    text = (tmp_path / "trained.md").read_text()
    assert "#### At equal k-NN recall@10" in text and "QPS at equal k-NN recall@10" in text
    assert set(pd.read_parquet(tmp_path / "trained_matched.parquet").metric) == {"ndcg@10", "knn_recall@10"}
    two_rows = _png_height(tmp_path / "trained_pareto.png")
    trained_report.pareto_figure(curves.drop(columns="knn_recall@10"), tmp_path / "one.png")
    assert two_rows > 1.5 * _png_height(tmp_path / "one.png")  # a second row of panels, k-NN recall@10 on x


def _png_height(path) -> int:
    import matplotlib.image

    return matplotlib.image.imread(path).shape[0]
