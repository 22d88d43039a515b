"""The cross-dataset table: a row per dataset, values as each dataset's KMR table has them, EHI's
tree against the best peer marked with that dataset's own significance test."""

import re

import numpy as np
import pandas as pd
import pytest

from ehi.core.io import write_table
from ehi.evaluate.metrics import kmr_table
from ehi.report.across import across_table, build_across, load_results, per_metric_and_budget

METRICS = ["ndcg@10", "recall@100"]


def summary(dataset, curves):
    """curves: {system: [(frac_visited, value)]}, the same values for every metric (offset by metric)."""
    rows = [{"dataset": dataset, "system": system, "variant": "main", "budget_param": "beam", "budget_value": float(i),
             "frac_visited": frac, "metric": metric, "value": value + 0.01 * m, "qps": 1.0}
            for system, points in curves.items() for i, (frac, value) in enumerate(points)
            for m, metric in enumerate(METRICS)]
    return pd.DataFrame(rows)


def significance(dataset, pairs):
    """pairs: [(metric, budget, peer, mean_tree, mean_peer, p_adjusted, significant)], randomization and t-test rows."""
    rows = []
    for metric, budget, peer, mean_a, mean_b, p, sig in pairs:
        for test, shift in (("randomization", 0.0), ("t-test", 0.5)):  # the t-test rows must not be read
            rows.append({"dataset": dataset, "metric": metric, "budget": budget, "system_a": "ehi+tree",
                         "system_b": peer, "mean_a": mean_a, "mean_b": mean_b + shift, "delta": mean_a - mean_b,
                         "test": test, "p_value": p, "p_adjusted": p, "significant": sig if test == "randomization" else not sig,
                         "n_queries": 30})
    return pd.DataFrame(rows)


CURVES_A = {"ehi+tree": [(0.04, 0.2), (0.09, 0.3), (1.0, 0.6)], "de+faiss-ivf": [(0.05, 0.5), (0.1, 0.55), (1.0, 0.7)],
            "de+exact": [(1.0, 0.7)]}
CURVES_B = {"ehi+tree": [(0.08, 0.4), (1.0, 0.5)], "de+faiss-ivf": [(0.03, 0.1), (0.07, 0.35), (1.0, 0.45)]}
SIG_A = [("ndcg@10", 0.05, "de+faiss-ivf", 0.2, 0.5, 0.001, True), ("ndcg@10", 0.1, "de+faiss-ivf", 0.3, 0.55, 0.01, True),
         ("ndcg@10", 1.0, "de+faiss-ivf", 0.6, 0.7, 0.2, False), ("ndcg@10", 1.0, "de+exact", 0.6, 0.71, 0.04, True)]
SIG_B = [("ndcg@10", 0.1, "de+faiss-ivf", 0.4, 0.35, 0.3, False)]


@pytest.fixture()
def results(tmp_path):
    for name, curves, pairs in (("a", CURVES_A, SIG_A), ("b", CURVES_B, SIG_B)):
        write_table(summary(name, curves), "summary", tmp_path / name / "main" / "summary.parquet")
        write_table(significance(name, pairs), "significance", tmp_path / name / "significance.parquet", keep_extra=True)
    return tmp_path


def test_one_row_per_dataset_with_each_datasets_kmr_values(results):
    loaded = load_results(results, ["a", "b", "never_run"])
    assert list(loaded) == ["a", "b"]  # a dataset without cached results is left out
    table = across_table(loaded).set_index("dataset")
    for name in ("a", "b"):
        kmr = kmr_table(loaded[name][0], [0.05, 0.1, 1.0], "recall@100")
        for target, label in ((0.05, "<=5%"), (0.1, "<=10%"), (1.0, "exact")):
            for system, value in kmr[kmr.target == target].set_index("system").value.items():
                cell = table.loc[name].get(f"recall@100 {label} {system}", np.nan)
                assert (np.isnan(cell) and np.isnan(value)) or cell == value, (name, label, system)
    assert np.isnan(table.loc["b", "ndcg@10 <=5% ehi+tree"])  # b's tree has no point that cheap
    assert "ndcg@10 <=5% de+exact" not in table  # a column with no value anywhere is dropped


def test_tree_vs_best_peer_uses_the_datasets_own_randomization_test(results):
    table = across_table(load_results(results, ["a", "b"])).set_index("dataset")
    # exact search on a: de+exact (0.71) beats de+faiss-ivf (0.70); its test says significant
    assert table.loc["a", "ndcg@10 exact tree vs best peer"] == "-0.110 vs de+exact (p_adj 0.040) *"
    assert table.loc["a", "ndcg@10 <=5% tree vs best peer"] == "-0.300 vs de+faiss-ivf (p_adj 0.001) *"
    assert table.loc["b", "ndcg@10 <=10% tree vs best peer"] == "+0.050 vs de+faiss-ivf (p_adj 0.300)"  # not significant
    assert table.loc["b", "ndcg@10 exact tree vs best peer"] == "–"  # no test in b's table


def test_build_writes_three_tables_and_one_figure(results, tmp_path):
    table = build_across(results, ["a", "b"], tmp_path / "out" / "across", tmp_path / "out" / "across.png")
    for suffix in (".md", ".tex", ".csv"):
        assert (tmp_path / "out" / f"across{suffix}").stat().st_size > 0
    assert list(pd.read_csv(tmp_path / "out" / "across.csv").dataset) == ["a", "b"] == list(table.dataset)
    assert (tmp_path / "out" / "across.png").read_bytes()[:4] == b"\x89PNG"
    # the page: one table per metric and budget with a value, a row per system, a column per dataset
    parts = per_metric_and_budget(table)
    titles = [t for t in parts if t.startswith("ndcg@10")]
    assert titles == ["ndcg@10 at <=5%", "ndcg@10 at <=10%", "ndcg@10 at exact"]
    tex = (tmp_path / "out" / "across.tex").read_text()
    labels = re.findall(r"\\label\{([^}]*)\}", tex)
    assert tex.count(r"\begin{table}") == len(parts) == len(set(labels))
    assert all(re.fullmatch(r"tab:across-[\w+-]+", label) for label in labels), labels  # plain keys
    exact = parts["ndcg@10 at exact"].set_index("system")
    assert list(exact.columns) == ["a", "b"]
    assert exact.loc["tree vs best peer", "a"] == "-0.110 vs de+exact (p_adj 0.040) *"
    assert (tmp_path / "out" / "across.md").read_text().count("### ") == len(parts)
    with pytest.raises(FileNotFoundError, match="no dataset"):
        build_across(results, ["never_run"], tmp_path / "x", tmp_path / "x.png")


def test_over_seeds_cells_are_seed_means_with_their_sd_and_variant_systems_join(tmp_path):
    """Three seeds of the main setting and of a floor variant: each cell is the mean ± sd of the
    seeds' KMR values; the variant's tree is a system of the table with its own comparison."""
    offsets = {0: 0.0, 1: 0.02, 2: 0.04}
    for seed, shift in offsets.items():
        main = "main" if seed == 0 else f"seed~{seed}"
        floor = "floor~kmeans" if seed == 0 else f"floor~kmeans/seed~{seed}"
        write_table(summary("a", {s: [(f, v + shift) for f, v in pts] for s, pts in CURVES_A.items()}),
                    "summary", tmp_path / "a" / main / "summary.parquet")
        floor_rows = summary("a", {"ehi+tree": [(0.05, 0.6 + shift), (1.0, 0.7)]}).assign(variant="floor~kmeans")
        write_table(floor_rows, "summary", tmp_path / "a" / floor / "summary.parquet")
    sig = significance("a", SIG_A)
    floor_sig = sig.assign(system_a="ehi-floor+tree", mean_a=sig.mean_a + 0.3, delta=sig.delta + 0.3)
    write_table(pd.concat([sig, floor_sig], ignore_index=True).assign(within_seed_spread=False), "significance",
                tmp_path / "a" / "significance.parquet", keep_extra=True)
    seeding = {"a": {"seed_replicas": {"main": {"main": 0, "seed~1": 1, "seed~2": 2},
                                       "floor~kmeans": {"floor~kmeans": 0, "floor~kmeans/seed~1": 1, "floor~kmeans/seed~2": 2}},
                     "variant_systems": {"ehi-floor+tree": "floor~kmeans/ehi+tree"}}}
    table = across_table(load_results(tmp_path, ["a"], seeding)).set_index("dataset")
    assert table.loc["a", "seeds"] == 3
    # de+faiss-ivf at <= 5%: 0.5, 0.52, 0.54 (+0.01 for recall@100's offset) -> mean 0.520, sd 0.020
    assert table.loc["a", "ndcg@10 <=5% de+faiss-ivf"] == "0.520 ± 0.020"
    assert table.loc["a", "recall@100 <=5% ehi-floor+tree"] == "0.630 ± 0.020"
    assert table.loc["a", "ndcg@10 <=5% ehi-floor+tree vs best peer"].startswith("+0.000 vs de+faiss-ivf")
    build_across(tmp_path, ["a"], tmp_path / "out" / "across", tmp_path / "out" / "across.png", seeding)
    assert "mean ± sd" in (tmp_path / "out" / "across.md").read_text()
