"""The ablation tables compare the config's ablation_systems, whatever their names: the registry
says which searches have a budget (read at the ablation budget) and which score every document.
A tree-pq ablation gets full tables and its significance rows, not NaN cells."""

import numpy as np
import pandas as pd
import pytest

from ehi.evaluate.stats import ablation_significance
from ehi.report.tables import ABLATION_BUDGET, ablation_searches, ablation_significance_table, ablation_table
from ehi.search.registry import budgeted
from tests.report.test_tables import summary

SYSTEMS = ("ehi+tree-pq", "ehi+exact")


def per_query(system, variant, frac, values):
    return pd.DataFrame({"dataset": "d", "system": system, "variant": variant, "budget_param": "p", "budget_value": 1.0,
                         "frac_visited": frac, "query_id": [f"q{i}" for i in range(len(values))], "metric": "ndcg@10",
                         "value": values})


def test_budgeted_searches_are_the_registrys_not_names():
    assert budgeted("ehi+tree") and budgeted("ehi+tree-pq") and budgeted("de+faiss-ivf") and budgeted("de+faiss-hnsw")
    assert not budgeted("ehi+exact") and not budgeted("pre+exact")
    assert ablation_searches(SYSTEMS) == [("ehi+tree-pq", "tree-pq", ABLATION_BUDGET), ("ehi+exact", "exact", 1.0)]


def test_a_tree_pq_ablation_gets_full_tables():
    def variant(name, tree, exact):
        return pd.concat([summary("ehi+tree-pq", [(ABLATION_BUDGET / 2, tree), (1.0, exact)], variant=name),
                          summary("ehi+exact", [(1.0, exact)], variant=name)])

    summaries = {"main": variant("main", 0.2, 0.6), "height~1": variant("height~1", 0.3, 0.5)}
    table = ablation_table(summaries, {"shape": ["height~1"]}, ["ndcg@10"], SYSTEMS)
    assert list(table.columns) == ["ablation", "variant", "tree-pq ndcg@10 @10%", "exact ndcg@10"]
    assert not table.isna().any().any()
    assert table["tree-pq ndcg@10 @10%"].tolist() == [0.2, 0.3]

    rng = np.random.default_rng(0)
    rows = pd.concat([per_query(s, v, f, rng.uniform(size=12)) for v in ("main", "height~1")
                      for s, f in (("ehi+tree-pq", 0.05), ("ehi+exact", 1.0))], ignore_index=True)
    sig = ablation_significance(rows, {"shape": ["height~1"]}, ["ndcg@10"], ABLATION_BUDGET, n_permutations=200,
                                searches=[(s, t) for s, _, t in ablation_searches(SYSTEMS)])
    assert set(sig.system_a) == set(SYSTEMS)
    shown = ablation_significance_table(sig, SYSTEMS)
    assert sorted(shown.search.unique()) == ["exact", "tree-pq @10%"] and not shown.search.isna().any()


@pytest.fixture
def renamed_tree():
    """EHI's tree registered under another name (as a plugin would register one): ``ehi+grove``."""
    from dataclasses import replace

    from ehi.search import registry

    kind = registry.register_kind(replace(registry.ann_kind("tree"), name="grove"))
    yield f"ehi+{kind.name}"
    registry._REGISTRY.pop(kind.name)


def test_a_renamed_tree_and_a_tree_pq_ablation_give_full_tables(renamed_tree, tmp_path):
    """The report and the statistics read which systems are trees and which exact from the registry
    and the config: a tree under another name is the paper's reference, the across table's tree and
    the KMR table's first row, and a [tree-pq, exact] ablation fills every cell of its tables."""
    from ehi.core.io import read_table, write_table
    from ehi.evaluate.ablation_tests import write_ablation_tests
    from ehi.evaluate.stats import significance_report
    from ehi.report.across import across_table, system_order
    from ehi.report.tables import ReportInputs, ReportSettings, build_report

    rng = np.random.default_rng(0)
    truth = rng.uniform(size=40)
    results = tmp_path / "d"
    curves = {renamed_tree: ((0.05, 0.8), (0.2, 1.0)), "ehi+tree-pq": ((0.05, 0.7), (0.2, 0.9)),
              "ehi+exact": ((1.0, 1.0),), "de+exact": ((1.0, 0.9),), "de+faiss-ivf": ((0.05, 0.6), (0.2, 0.85))}
    for variant, shift in (("main", 0.0), ("height~1", -0.1)):
        rows = pd.concat([per_query(s, variant, f, np.clip(truth * scale + shift, 0, 1))
                          for s, points in curves.items() for f, scale in points], ignore_index=True)
        for system, frame in rows.groupby("system"):
            write_table(frame.assign(budget_value=frame.frac_visited), "per_query",
                        results / variant / "per_query" / f"{system}.parquet")
        summary_rows = rows.groupby(["dataset", "system", "variant", "budget_param", "frac_visited", "metric"],
                                    as_index=False).value.mean()
        write_table(summary_rows.assign(budget_value=summary_rows.frac_visited, qps=1.0), "summary",
                    results / variant / "summary.parquet")
    main_rows = pd.concat([read_table(p) for p in sorted((results / "main" / "per_query").glob("*.parquet"))])
    sig = significance_report(main_rows, ["ndcg@10"], (0.05, 0.2, 1.0), n_permutations=200)
    assert set(sig[sig.family == "budgets"].system_a) == {renamed_tree}
    assert set(sig[sig.family == "exact"].system_a) == {"ehi+exact"} and set(sig.system_b) >= {"de+exact", "de+faiss-ivf"}
    write_table(sig, "significance", results / "significance.parquet", keep_extra=True)

    summary = read_table(results / "main" / "summary.parquet")
    assert system_order([summary])[0] == renamed_tree
    across = across_table({"d": (summary, sig)}, ["ndcg@10"], {0.05: "<=5%", 1.0: "exact"})
    assert " vs de+faiss-ivf (p_adj " in across["ndcg@10 <=5% tree vs best peer"].iloc[0]  # tree-pq is no peer

    ablation = ("ehi+tree-pq", "ehi+exact")
    settings = ReportSettings("d", ("main", "height~1"), {"shape": ["height~1"]}, ("ndcg@10",), (0.05, 0.2, 1.0),
                              ablation, ablation_rows={"shape": [{"height": "1"}]})
    # rule ablation_significance's table, from the per-query tables of the ablation systems
    write_ablation_tests([results / v / "per_query" / f"{s}.parquet" for v in settings.variants for s in ablation],
                         results / "ablation_significance.parquet", settings.ablations, settings.metrics, ablation,
                         n_permutations=200)
    build_report(ReportInputs.of_results(results, settings.variants), settings, tmp_path / "t", tmp_path / "f")
    kmr = pd.read_csv(tmp_path / "t" / "d_kmr.csv")
    assert kmr.set_index("system").loc[renamed_tree, ["5%", "20%", "100%"]].notna().all()
    for name in ("d_ablations.csv", "d_ablation_significance.csv"):
        table = pd.read_csv(tmp_path / "t" / name)
        assert len(table) and not table.isna().any().any(), (name, table)
    assert set(pd.read_csv(tmp_path / "t" / "d_ablation_significance.csv").search) == {"tree-pq @10%", "exact"}
