"""The trained benchmark prints no ratio "at equal nDCG@10" where a system's best is 0: what a
``trained_benchmark.max_frac`` of 1e-300 leaves (each sweep cut after its first budget)."""

import re

import numpy as np
import pandas as pd
import pytest

from benchmarks import trained_report
from ehi.core.errors import ConfigError


def _curve(system, ndcg, qps):
    return pd.DataFrame({"system": system, "budget_value": range(len(ndcg)), "ndcg@10": ndcg, "recall@10": ndcg,
                         "knn_recall@10": ndcg, "qps": qps, "p50_ms": 1000 / np.asarray(qps),
                         "p99_ms": 2000 / np.asarray(qps), "frac_scored": 1e-3, "threads": 1})


def test_a_system_of_zero_quality_at_best_is_refused_not_matched(tmp_path):
    curves = pd.concat([_curve("ehi+tree", [0.0], [900.0]), _curve("ehi+faiss-hnsw", [0.4], [300.0])],
                       ignore_index=True)
    says = ("trained_benchmark: the best nDCG@10 of ehi+tree over the sweep is 0: no equal quality to match "
            "the systems at; raise trained_benchmark.max_frac (--max-frac)")
    with pytest.raises(ConfigError, match=re.escape(says)):
        trained_report.matched(curves)
    with pytest.raises(ConfigError, match="no equal quality"):
        trained_report.write_outputs(curves, tmp_path, "toy")
    assert not (tmp_path / "trained.md").exists()


def test_systems_of_some_quality_are_matched_as_before():
    curves = pd.concat([_curve("ehi+tree", [0.2, 0.5], [900.0, 400.0]), _curve("ehi+faiss-hnsw", [0.4], [300.0])],
                       ignore_index=True)
    table = trained_report.matched(curves).set_index("target_share")
    assert table.target.to_dict() == pytest.approx({0.9: 0.36, 0.95: 0.38, 0.99: 0.396})  # of the peer's 0.4
    assert table.qps_ratio.to_dict() == pytest.approx({0.9: 400 / 300, 0.95: 400 / 300, 0.99: 400 / 300})
