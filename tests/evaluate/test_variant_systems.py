"""An ablation variant's system reported beside the main ones (evaluation.variant_systems)."""

import numpy as np
import pandas as pd
import pytest

from ehi.core.errors import ConfigError
from ehi.evaluate.stats import significance_report
from ehi.evaluate.variant_systems import VariantSystem, relabel, resolve, significance_role, with_variant_systems

VARIANTS = ["main", "indexer_init~kmeans"]
MAIN = ["de+exact", "de+faiss-ivf", "ehi+tree", "ehi+exact"]


def _systems_of(variant):
    return MAIN if variant == "main" else ["ehi+tree", "ehi+exact"]


def test_resolve_reads_variant_and_system():
    specs = resolve({"ehi-warm+tree": "indexer_init~kmeans/ehi+tree"}, VARIANTS, _systems_of, MAIN)
    assert specs == [VariantSystem("ehi-warm+tree", "indexer_init~kmeans", "ehi+tree")]
    assert specs[0].per_query == "indexer_init~kmeans/per_query/ehi+tree.parquet"
    assert significance_role(specs[0]) == "tree"
    assert significance_role(VariantSystem("w+exact", "v", "ehi+exact")) == "exact"
    assert significance_role(VariantSystem("w+faiss-ivf", "v", "ehi+faiss-ivf")) == "baseline"
    assert resolve(None, VARIANTS, _systems_of, MAIN) == []


@pytest.mark.parametrize("mapping, says", [
    ({"ehi-warm+tree": "ehi+tree"}, "is not <variant>/<system>"),
    ({"ehi+tree": "indexer_init~kmeans/ehi+tree"}, "already a system of the main setting"),
    ({"ehi-warm+tree": "height~2/ehi+tree"}, "variant 'height~2' is not an ablation variant"),
    ({"ehi-warm+tree": "main/ehi+tree"}, "variant 'main' is not an ablation variant"),
    ({"ehi-warm+tree": "indexer_init~kmeans/ehi+scann"}, "does not search 'ehi+scann'"),
])
def test_resolve_refuses_what_the_config_does_not_define(mapping, says):
    with pytest.raises(ConfigError, match="evaluation.variant_systems.ehi") as err:
        resolve(mapping, VARIANTS, _systems_of, MAIN)
    assert says in str(err.value)


def _rows(system, variant, values, frac):
    n = len(values)
    return pd.DataFrame({"dataset": "toy", "system": system, "variant": variant, "budget_param": "beam",
                         "budget_value": 1, "frac_visited": frac, "query_id": [f"q{i}" for i in range(n)],
                         "metric": "ndcg@10", "value": values})


def test_relabel_moves_only_the_named_system_into_main():
    variant = pd.concat([_rows("ehi+tree", "v", [0.5, 0.6], 0.05), _rows("ehi+exact", "v", [0.7, 0.8], 1.0)])
    out = relabel(variant, VariantSystem("ehi-warm+tree", "v", "ehi+tree"))
    assert set(out.system) == {"ehi-warm+tree"} and set(out.variant) == {"main"}
    assert out.value.tolist() == [0.5, 0.6]
    main = _rows("ehi+tree", "main", [0.1, 0.2], 0.05)
    both = with_variant_systems(main, [(VariantSystem("ehi-warm+tree", "v", "ehi+tree"), variant)])
    assert sorted(both.system.unique()) == ["ehi+tree", "ehi-warm+tree"] and len(both) == 4
    assert with_variant_systems(main, []) is main


def test_a_variant_tree_gets_its_own_families_and_leaves_the_papers_untouched():
    rng = np.random.default_rng(0)
    truth = rng.random(60)
    per_query = pd.concat([
        _rows("ehi+tree", "main", np.clip(truth - 0.2, 0, 1), 0.05),
        _rows("de+faiss-ivf", "main", np.clip(truth - 0.1, 0, 1), 0.05),
        _rows("ehi+exact", "main", truth, 1.0), _rows("de+exact", "main", truth, 1.0),
    ], ignore_index=True)
    warm = _rows("ehi-warm+tree", "main", truth, 0.05)
    paper = significance_report(per_query, ["ndcg@10"], (0.05, 1.0), n_permutations=500)
    both = significance_report(pd.concat([per_query, warm]), ["ndcg@10"], (0.05, 1.0), n_permutations=500,
                               more_references={"ehi-warm+tree": "tree"})
    # the paper's families are exactly as before: the variant system is not one of their baselines
    key = ["system_a", "system_b", "budget", "test"]
    same = both[both.system_a != "ehi-warm+tree"].sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(same, paper.sort_values(key).reset_index(drop=True))
    warm_rows = both[both.system_a == "ehi-warm+tree"]
    # against EHI's own tree and every baseline: at 5 % the two with a point there, at 100 % all four
    assert set(warm_rows[warm_rows.budget == 0.05].system_b) == {"ehi+tree", "de+faiss-ivf"}
    assert set(warm_rows[warm_rows.budget == 1.0].system_b) == {"ehi+tree", "de+faiss-ivf", "ehi+exact", "de+exact"}
    assert set(warm_rows.family) == {"budgets"}
    ivf = warm_rows[(warm_rows.system_b == "de+faiss-ivf") & (warm_rows.test == "randomization")]
    assert (ivf.delta > 0).all() and ivf.significant.all()
