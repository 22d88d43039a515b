"""The smallest benchmark path end to end: tables with the expected columns, finite ratios.

Never a timing threshold: the machine is shared, only the shape and sanity of the output count.
"""

import numpy as np
import pandas as pd
import pytest

from ehi.core.io import read_table

from benchmarks import cli, data, search

TINY = {
    "search": {"datasets": [["synthetic", 3000]], "n_queries": 60, "rounds": 1, "n_latency": 5, "tree_steps": 5,
               "systems": ["ehi-scan", "faiss-ivf", "scann"]},
    "build": {"sizes": [2000], "n_queries": 30, "repeats_small": 1, "big": 2000, "tree_steps": 5,
              "systems": ["ehi-scan", "faiss-ivf"]},
    "training": {"steps": 1, "batch_size": 4, "n_docs": 120, "n_queries": 40, "encoder": "tiny-random"},
    "stream": {"max_queries": 40, "n_docs": 200, "lengths": [4, 40]},
    "export": {"datasets": [["synthetic", 3000]], "n_queries": 60, "rounds": 1, "n_latency": 5, "tree_steps": 5,
               "systems": ["ehi-faiss", "faiss-ivf", "ehi-pq4-rr", "faiss-ivfpq4-rr", "scann-ah"]},
}


pytestmark = pytest.mark.integration  # the benchmark families run end to end (the `out` fixture)

@pytest.fixture(scope="module")
def out(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    for rule, fn in cli.RULES.items():
        key = rule.removeprefix("bench_")
        fn({**TINY.get(key, {}), "quick": True}, {k: out / v for k, v in cli.OUTPUTS[rule].items()}, 1)
    return out


def test_clustered_is_deterministic_and_unit_norm():
    a, qa = data.clustered(500, 10)
    b, qb = data.clustered(500, 10)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(qa, qb)
    assert a.shape == (500, data.DIM) and a.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1, atol=1e-5)


def test_search_tables(out):
    curves = read_table(out / "search_curves.parquet")
    assert {"dataset", "system", "budget_value", "recall", "frac_scored", "qps", "p50_ms", "p99_ms"} <= set(curves)
    assert set(curves.system) == set(TINY["search"]["systems"])
    assert curves.recall.between(0, 1).all() and (curves.qps > 0).all()
    matched = read_table(out / "search_matched.parquet")
    assert {"matched_at", "target", "system", "qps_ratio", "p50_ratio", "p99_ratio"} <= set(matched)
    ivf = matched[(matched.matched_at == "frac_scored") & (matched.system == "faiss-ivf")].qps_ratio
    best = matched[(matched.matched_at == "recall") & (matched.system == "best-peer")].qps_ratio
    assert np.isfinite(ivf).any() and np.isfinite(best).any()


def test_build_and_scaling_tables(out):
    builds = read_table(out / "build.parquet")
    assert {"system", "n_docs", "build_seconds", "peak_rss_build", "peak_rss_search", "raw_bytes",
            "ehi_build_ratio", "peak_rss_search_over_raw"} <= set(builds)
    assert np.isfinite(builds.ehi_build_ratio).all() and (builds.peak_rss_search >= builds.rss_data).all()
    beams = read_table(out / "beams.parquet")
    assert np.isfinite(beams.measured_over_model).all() and (beams.n_scored > 0).all()


def test_training_tables(out):
    steps = read_table(out / "training_steps.parquet")
    assert set(steps.setting) == {"in-batch", "hard"} and set(steps.model) == {"ehi", "de"}
    assert np.isfinite(steps.ehi_over_de.dropna()).all() and len(steps.ehi_over_de.dropna()) == 2
    eff = read_table(out / "efficiency.parquet").iloc[0]
    assert eff.flops_per_step > 0 and 0 < eff.efficiency and np.isfinite(eff.fwd_bwd_efficiency)
    reidx = read_table(out / "reindex.parquet").iloc[0]
    assert 0 < reidx.assign_share < 1


def test_summary_names_every_ratio(out):
    text = (out / "summary.md").read_text()
    for heading in ("Search at matched quality", "build time", "Training overhead", "Hardware efficiency",
                    "Scaling", "Peak memory", "Targets"):
        assert heading in text
    assert (out / "scaling.png").exists() and (out / "search_qps_recall.png").exists()


def test_export_tables_and_section(out):
    curves = read_table(out / "export_curves.parquet")
    assert set(curves.system) == set(TINY["export"]["systems"]) and (curves.tree_height == 1).all()
    assert curves.recall.between(0, 1).all() and (curves.qps > 0).all()
    matched = read_table(out / "export_matched.parquet")
    at = matched[(matched.matched_at == "frac_scored")].set_index(["target", "system"]).qps
    assert np.isfinite(at.xs("ehi-faiss", level="system")).any()
    text = (out / "summary.md").read_text()
    assert "## 8. EHI inside FAISS" in text and "EHI-PQ QPS ≥ 0.8 × ScaNN-AH" in text


def test_interpolation_never_extrapolates():
    curve = pd.DataFrame({"recall": [0.5, 0.8, 0.96], "frac_scored": [0.01, 0.02, 0.04], "qps": [400.0, 200, 100]})
    at = search._interp(curve, "recall", 0.88, ["qps"])
    assert 100 < at["qps"] < 200
    assert np.isnan(search._interp(curve, "recall", 0.99, ["qps"])["qps"])
    assert np.isnan(search._interp(curve, "frac_scored", 0.005, ["qps"], log_x=True)["qps"])


def test_stream_load_reports_peak_rss_per_stream_length(out):
    table = read_table(out / "stream.parquet")
    assert table.n_queries.tolist() == [4, 40]
    assert (table.peak_rss_mib > 0).all() and table.peak_over_shortest.iloc[0] == 1.0
    assert np.isfinite(table.peak_over_shortest).all() and (table.queries_per_second > 0).all()
    assert "## 7. Load" in (out / "summary.md").read_text()
