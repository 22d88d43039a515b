"""The trees together against each peer: at each target the fastest tree of any kind meets each
peer, so a PQ tree that is the fastest tree where a float peer is the one to beat is counted."""

import pandas as pd
import pytest

from benchmarks.trained_together import together_markdown, trees_together


def _curves(with_rounds=True):
    rows = [  # system, nDCG@10, QPS: the flat tree fast at low quality, the PQ tree at high
        ("ehi+tree", 0.20, 9000), ("ehi+tree", 0.30, 1000),
        ("ehi+tree-pq", 0.20, 4000), ("ehi+tree-pq", 0.30, 3000),
        ("de+faiss-hnsw", 0.20, 5000), ("de+faiss-hnsw", 0.30, 2000),
    ]
    curves = pd.DataFrame(rows, columns=["system", "ndcg@10", "qps"])
    if with_rounds:
        curves["qps_min"], curves["qps_max"] = curves.qps * 0.9, curves.qps * 1.1
    return curves


def test_the_fastest_tree_at_each_target_meets_each_peer_with_its_rounds_range():
    table = trees_together(_curves(), targets=(0.5, 1.0))
    assert list(table.peer) == ["de+faiss-hnsw"] * 2
    low, high = table.iloc[0], table.iloc[1]
    assert (low.tree, low.qps_ratio) == ("ehi+tree", 9000 / 5000)  # target 0.15: the flat tree
    assert (high.tree, high.qps_ratio) == ("ehi+tree-pq", 3000 / 2000)  # target 0.30: the PQ tree
    assert (high.qps_ratio_low, high.qps_ratio_high) == pytest.approx((2700 / 2200, 3300 / 1800))
    md = together_markdown(table)
    assert "below 1.0x at 0 of 2 points" in md and "1.23-1.83" in md


def test_one_tree_or_no_rounds_kept():
    one = _curves()[lambda c: c.system != "ehi+tree-pq"]
    assert trees_together(one).empty
    assert "qps_ratio_low" not in trees_together(_curves(with_rounds=False))
