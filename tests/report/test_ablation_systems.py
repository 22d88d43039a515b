"""The ablation tables compare the config's ablation_systems, whatever their names: the registry
says which searches have a budget (read at the ablation budget) and which score every document.
A tree-pq ablation gets full tables and its significance rows, not NaN cells."""

import numpy as np
import pandas as pd

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
