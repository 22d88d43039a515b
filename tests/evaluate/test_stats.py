"""Paired significance tests, Holm's correction and the significance table."""

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ehi.evaluate.metrics import summarize
from ehi.core.io import read_table, write_table
from ehi.evaluate.stats import ablation_significance, holm, paired_tests, randomization_test, significance_table


def test_identical_runs_give_p_one():
    a = np.random.default_rng(0).random(200)
    res = paired_tests(a, a.copy(), n_permutations=2000)
    assert res["p_t-test"] == 1.0 and res["p_randomization"] == 1.0
    assert res["delta"] == 0 and res["effect_size"] == 0 and res["ci_low"] == res["ci_high"] == 0


def test_a_clearly_better_run_is_significant():
    rng = np.random.default_rng(1)
    b = rng.random(200)
    a = np.clip(b + 0.1 + 0.1 * rng.standard_normal(200), 0, 1)
    res = paired_tests(a, b, n_permutations=2000)
    assert res["p_t-test"] < 0.01 and res["p_randomization"] < 0.01 and res["delta"] > 0.05
    diff = a - b
    assert res["effect_size"] == pytest.approx(diff.mean() / diff.std(ddof=1))
    lo, hi = stats.t.interval(0.95, len(diff) - 1, loc=diff.mean(), scale=stats.sem(diff))
    assert (res["ci_low"], res["ci_high"]) == (pytest.approx(lo), pytest.approx(hi))


def test_randomization_p_matches_full_enumeration_and_is_seeded():
    diff = np.array([0.3, -0.1, 0.2, 0.05, 0.4, -0.2, 0.1, 0.15, 0.0, 0.25])
    flips = np.array(list(itertools.product((-1, 1), repeat=len(diff))))
    exact = np.mean(np.abs(flips @ diff) >= abs(diff.sum()) - 1e-12)
    p = randomization_test(diff, n_permutations=20_000, seed=5)
    assert p == pytest.approx(exact, abs=0.01)
    assert p == randomization_test(diff, n_permutations=20_000, seed=5)


def test_holm_matches_a_hand_computed_case():
    # sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> running max 0.06
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03, 0.005]), [0.03, 0.06, 0.06, 0.02])
    np.testing.assert_allclose(holm([0.5, 0.9]), [1.0, 1.0])


def _per_query(rng, n=120):
    """EHI clearly ahead of IVF at 5 %, equal to exact search at 100 %; de+hnsw has no point under 5 %."""
    truth = rng.random(n)
    points = {  # system: [(budget_value, frac_visited, values)]
        "ehi+tree": [(1, 0.04, np.clip(truth - 0.05 * rng.random(n), 0, 1)), (16, 1.0, truth)],
        "de+faiss-ivf": [(1, 0.05, np.clip(truth - 0.3 * rng.random(n), 0, 1)), (64, 1.0, truth)],
        "de+faiss-hnsw": [(8, 0.2, truth), (512, 1.0, truth)],
    }
    frames = [pd.DataFrame({"dataset": "toy", "system": s, "variant": "main", "budget_param": "b",
                            "budget_value": b, "frac_visited": f, "query_id": [f"q{i}" for i in range(n)],
                            "metric": "ndcg@10", "value": v})
              for s, pts in points.items() for b, f, v in pts]
    return pd.concat(frames, ignore_index=True)


def test_significance_table_compares_the_reference_at_each_target(tmp_path):
    per_query = _per_query(np.random.default_rng(2))
    table = significance_table(per_query, summarize(per_query), "ndcg@10", "ehi+tree", targets=(0.05, 1.0),
                               n_permutations=2000, seed=3)
    rows = table.set_index(["budget", "system_b", "test"]).sort_index()
    assert set(table.system_a) == {"ehi+tree"} and "ehi+tree" not in set(table.system_b)
    assert len(table) == 2 * 3  # (ivf at 5 %, ivf at 100 %, hnsw at 100 %) x two tests
    assert (rows.loc[(0.05, "de+faiss-ivf"), "p_value"] < 0.01).all()
    assert (rows.loc[(1.0, "de+faiss-hnsw"), "p_value"] == 1.0).all()
    for test, family in table.groupby("test"):
        np.testing.assert_allclose(family.p_adjusted, holm(family.p_value))
    assert {"effect_size", "ci_low", "ci_high", "n_permutations", "seed"} <= set(table.columns)
    assert table[table.test == "randomization"].n_permutations.eq(2000).all()
    back = read_table(write_table(table, "significance", tmp_path / "sig.parquet"), "significance")
    assert len(back) == len(table) and back.significant.dtype == bool


def test_ablation_significance_pairs_each_variant_with_main_per_search():
    """A variant far ahead of main at exact search and equal in the tree; a variant never searched is skipped."""
    rng = np.random.default_rng(3)
    n = 150
    truth = rng.random(n)
    ahead = np.clip(truth + 0.2 + 0.05 * rng.standard_normal(n), 0, 1)
    curves = {  # (variant, system): [(beam, frac_visited, values)]
        ("main", "ehi+tree"): [(1, 0.05, truth * 0.5), (4, 0.2, truth)],
        ("main", "ehi+exact"): [(0, 1.0, truth)],
        ("loss~x", "ehi+tree"): [(1, 0.08, truth * 0.5), (4, 0.3, ahead)],
        ("loss~x", "ehi+exact"): [(0, 1.0, ahead)],
    }
    per_query = pd.concat([pd.DataFrame({"dataset": "toy", "system": s, "variant": v, "budget_param": "beam",
                                         "budget_value": b, "frac_visited": f, "query_id": [f"q{i}" for i in range(n)],
                                         "metric": "ndcg@10", "value": vals})
                           for (v, s), pts in curves.items() for b, f, vals in pts], ignore_index=True)
    sig = ablation_significance(per_query, {"loss": ["loss~x", "loss~never_run"]}, ["ndcg@10"], budget=0.1,
                                n_permutations=2000)
    assert set(sig.variant) == {"loss~x"} and len(sig) == 4  # 2 searches x 2 tests
    tree = sig[sig.system_a == "ehi+tree"]
    # the tree is compared at each one's point under 10 % (beam 1), where both score truth * 0.5
    np.testing.assert_allclose(tree.budget_a, 0.08)
    np.testing.assert_allclose(tree.budget_b, 0.05)
    assert (tree.delta == 0).all() and (tree.p_value == 1.0).all() and not tree.significant.any()
    exact = sig[sig.system_a == "ehi+exact"]
    assert exact.delta.iloc[0] == pytest.approx((ahead - truth).mean())
    assert (exact.p_value < 0.01).all() and exact.significant.all()
    # Holm over the family of one ablation: each test's two comparisons are adjusted together
    for _, family in sig.groupby("test"):
        np.testing.assert_allclose(family.p_adjusted, holm(family.p_value))


def test_ablation_significance_without_ablations_or_results_is_empty():
    assert ablation_significance(pd.DataFrame(), {"loss": ["loss~x"]}, ["ndcg@10"]).empty
    assert ablation_significance(_per_query(np.random.default_rng(0)), {}, ["ndcg@10"]).empty


def test_a_config_without_an_ehi_system_writes_and_renders_a_table_with_no_rows(tmp_path):
    # systems: [pre+exact, pre+faiss-ivf]: no reference to test, so no comparison, and no failure
    from ehi.evaluate.stats import significance_report
    from ehi.report.significance_table import render_significance

    per_query = _per_query(np.random.default_rng(0)).replace({"system": {"ehi+tree": "pre+exact",
                                                                          "de+faiss-ivf": "pre+faiss-ivf"}})
    per_query = per_query[per_query.system != "de+faiss-hnsw"]
    table = significance_report(per_query, ["ndcg@10"], n_permutations=100)
    assert table.empty
    path = write_table(table, "significance", tmp_path / "significance.parquet", keep_extra=True)
    assert read_table(path, "significance").empty
    md = render_significance(read_table(path), tmp_path / "toy_significance")[0].read_text()
    assert "No comparison" in md


def _vectors_run(rng, n=120):
    """A run over vectors: EHI's tree and the floor's beside the searches of the vectors as given
    (pre+), the tree clearly ahead of k-means IVF at 5 %."""
    per_query = _per_query(rng, n).replace({"system": {"de+faiss-ivf": "pre+faiss-ivf", "de+faiss-hnsw": "pre+faiss-hnsw"}})
    floor = per_query[per_query.system == "ehi+tree"].assign(system="ehi-floor+tree")
    return pd.concat([per_query, floor], ignore_index=True)


def test_on_vectors_the_searches_of_the_vectors_as_given_are_the_baselines():
    from ehi.evaluate.stats import significance_report

    per_query = _vectors_run(np.random.default_rng(4))
    table = significance_report(per_query, ["ndcg@10"], (0.05, 1.0), n_permutations=500, pre_baselines=True,
                                more_references={"ehi-floor+tree": "tree"})
    pre = {"pre+faiss-ivf", "pre+faiss-hnsw"}
    for reference, others in (("ehi+tree", pre), ("ehi-floor+tree", pre | {"ehi+tree"})):  # a family each
        rows = table[(table.system_a == reference) & (table.test == "randomization")]
        assert set(rows.system_b) == others
        ivf = rows[(rows.system_b == "pre+faiss-ivf") & (rows.budget == 0.05)].iloc[0]
        assert ivf.delta > 0.05 and ivf.significant
        np.testing.assert_allclose(rows.p_adjusted, holm(rows.p_value))
    # beside a trained encoder (the default) the same searches are reference points: no comparison
    assert significance_report(per_query, ["ndcg@10"], (0.05, 1.0), n_permutations=500,
                               more_references={"ehi-floor+tree": "tree"}).system_b.isin(["ehi+tree"]).all()
