"""An ablation variant's system reported beside the main ones (evaluation.variant_systems)."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ehi.core.errors import ConfigError
from ehi.evaluate.stats import significance_report
from ehi.evaluate.variant_systems import (VariantSystem, config_variant_paths, parse, relabel, resolve, row_names,
                                          significance_role, with_variant_systems)

SCHEMA = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"

# {ablation table: [its rows' variant paths]}, as ehi.core.config_schema.ablation_variants names them
ABLATIONS = {"stabiliser": ["indexer_init~kmeans"], "from_de": ["encoder_init~de", "encoder_init~de/indexer_init~ivf"]}
MAIN = ["de+exact", "de+faiss-ivf", "ehi+tree", "ehi+exact"]


def _systems_of(variant):
    return MAIN if variant == "main" else ["ehi+tree", "ehi+exact"]


def test_resolve_reads_the_row_and_the_system():
    specs = resolve({"ehi-warm+tree": "stabiliser/ehi+tree"}, ABLATIONS, _systems_of, MAIN)
    assert specs == [VariantSystem("ehi-warm+tree", "indexer_init~kmeans", "ehi+tree")]
    assert specs[0].per_query == "indexer_init~kmeans/per_query/ehi+tree.parquet"
    assert parse({s.name: s.path for s in specs}) == specs  # what the rules pass on reads back the same
    assert significance_role(specs[0]) == "tree"
    assert significance_role(VariantSystem("w+exact", "v", "ehi+exact")) == "exact"
    assert significance_role(VariantSystem("w+faiss-ivf", "v", "ehi+faiss-ivf")) == "baseline"
    assert resolve(None, ABLATIONS, _systems_of, MAIN) == []


def test_a_row_of_a_longer_table_is_named_by_its_index():
    assert row_names(ABLATIONS) == {"stabiliser": "indexer_init~kmeans", "from_de[0]": "encoder_init~de",
                                    "from_de[1]": "encoder_init~de/indexer_init~ivf"}
    specs = resolve({"ehi-de-ivf+tree": "from_de[1]/ehi+tree"}, ABLATIONS, _systems_of, MAIN)
    assert specs == [VariantSystem("ehi-de-ivf+tree", "encoder_init~de/indexer_init~ivf", "ehi+tree")]


@pytest.mark.parametrize("mapping, says", [
    ({"ehi-warm+tree": "ehi+tree"}, "is not <ablation row>/<system>"),
    ({"ehi+tree": "stabiliser/ehi+tree"}, "already a system of the main setting"),
    ({"ehi-warm+tree": "shape/ehi+tree"},
     "'shape' names no ablation row (a table of one row by its name, else <table>[i]); "
     "known: stabiliser, from_de[0], from_de[1]"),
    # a row's path, not its name: the settings are written once, in ablations
    ({"ehi-warm+tree": "indexer_init~kmeans/ehi+tree"}, "'indexer_init~kmeans' names no ablation row"),
    ({"ehi-warm+tree": "from_de/ehi+tree"}, "'from_de' names no ablation row"),
    ({"ehi-warm+tree": "from_de[2]/ehi+tree"}, "'from_de[2]' names no ablation row"),
    ({"ehi-warm+tree": "main/ehi+tree"}, "'main' names no ablation row"),
    ({"ehi-warm+tree": "stabiliser/ehi+scann"}, "stabiliser (indexer_init~kmeans) does not search 'ehi+scann'"),
])
def test_resolve_refuses_what_the_config_does_not_define(mapping, says):
    with pytest.raises(ConfigError, match="evaluation.variant_systems.ehi") as err:
        resolve(mapping, ABLATIONS, _systems_of, MAIN)
    assert says in str(err.value)
    assert "\n" not in str(err.value)


def test_no_ablations_are_named_as_none():
    with pytest.raises(ConfigError, match="known: none"):
        resolve({"ehi-warm+tree": "stabiliser/ehi+tree"}, {}, _systems_of, MAIN)


def test_a_config_as_written_resolves_its_rows_as_the_snakefile_does():
    """A row leaving out a key another row sets takes the train value (the schema default, or a
    grid's first value), so the paths are the training rules' own."""
    config = {"train": {"lr_encoder": {"choose": [1.0e-4, 1.0e-3]}},
              "ablations": {"floor": [{"indexer_init": "ivf", "floor": "kmeans"}],
                            "rates": [{"lr_encoder": 1.0e-3}, {"floor": "kmeans"}]},
              "evaluation": {"variant_systems": {"ehi-floor+tree": "floor/ehi+tree", "ehi-r+exact": "rates[0]/ehi+exact",
                                                 "ehi-k+tree": "rates[1]/ehi+tree"}}}
    assert config_variant_paths(config, SCHEMA) == {"ehi-floor+tree": "indexer_init~ivf/floor~kmeans/ehi+tree",
                                                    "ehi-r+exact": "lr_encoder~0.001/floor~none/ehi+exact",
                                                    "ehi-k+tree": "lr_encoder~0.0001/floor~kmeans/ehi+tree"}
    assert config_variant_paths({}, SCHEMA) == {}


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
