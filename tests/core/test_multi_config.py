"""Several datasets in one config (ehi.core.multi_config): each entry's config, and the sections over
datasets refused in one line naming their key; the workflow raises nothing of its own."""

import os
from pathlib import Path

import pytest

from ehi.core.errors import ConfigError
from ehi.config_checks import check_tree_names
from ehi.core.multi_config import (calibration_target, check_gain_pairs, check_trained_benchmark, dataset_configs,
                                   gain_datasets, rule_prefixes)

REPO = Path(__file__).resolve().parents[2]
CONFIG = {"train": {"epochs": 2, "height": 1}, "datasets": {"a": {"train": {"epochs": 3}}, "b": {}}}


def refusal(call, *args) -> str:
    with pytest.raises(ConfigError) as err:
        call(*args)
    assert "\n" not in str(err.value)
    return str(err.value)


def test_each_entry_lays_its_keys_over_the_shared_ones():
    configs = dataset_configs(CONFIG)
    assert configs["a"]["train"] == {"epochs": 3, "height": 1} and configs["b"]["train"] == {"epochs": 2, "height": 1}
    assert configs["a"]["dataset"] == {"name": "a"}
    assert "datasets" not in configs["a"]
    assert refusal(dataset_configs, {"datasets": {"a": {"dataset": {"name": "z"}}}}) == \
        "config datasets.a.dataset.name is 'z'; leave it out or make it 'a'"


def test_rule_prefixes_are_identifiers_that_do_not_clash():
    assert rule_prefixes(["world_1e4", "mlp_lr1e-3"]) == {"world_1e4": "world_1e4__", "mlp_lr1e-3": "mlp_lr1e_3__"}
    assert "clash once made rule names" in refusal(rule_prefixes, ["a-b", "a_b"])


def test_gain_reads_its_datasets_and_other_configs_runs():
    datasets = dataset_configs(CONFIG)
    assert gain_datasets({}, datasets) == {}
    assert list(gain_datasets({"name": "g"}, datasets)) == ["a", "b"]
    other = gain_datasets({"name": "g", "datasets": ["b"], "other_datasets": {"webster_q1e3": REPO / "config" / "webster.yaml"}},
                          datasets)
    assert [(n, ours) for n, (_, ours) in other.items()] == [("b", True), ("webster_q1e3", False)]
    assert other["webster_q1e3"][0]["dataset"]["name"] == "webster_q1e3"
    assert refusal(gain_datasets, {"datasets": ["a"]}, datasets).startswith("config gain: no name")
    assert refusal(gain_datasets, {"name": "g", "datasets": ["c"]}, datasets) == \
        "config gain.datasets: ['c'] are not datasets of this config (['a', 'b'])"
    assert "runs no dataset 'nope'" in refusal(gain_datasets, {"name": "g", "other_datasets": {"nope": REPO / "config" / "webster.yaml"}},
                                               datasets)


def test_gain_dataset_pairs_name_the_tables_datasets_each_with_a_tree_and_its_controls():
    check_gain_pairs({"a": {"ehi-2stage+tree": ["de+ivf-lists"]}}, {"a": None, "b": None})
    assert refusal(check_gain_pairs, {"c": {"t": ["i"]}}, {"a": None}) == \
        "config gain.dataset_pairs: ['c'] are not datasets of the gain table (['a'])"
    assert "['a'] name no tree, or a tree without controls" in refusal(check_gain_pairs, {"a": {"t": []}}, {"a": None})


def test_world_calibration_needs_a_name_and_a_target():
    assert calibration_target({"name": None, "target": None, "grid": None}, ["a"]) is None
    assert calibration_target({"name": "c", "target": "a"}, ["a"]) == "results/a"
    assert calibration_target({"name": "c", "target": "webster"}, ["a"]) == os.path.abspath("results/webster")
    assert refusal(calibration_target, {"grid": {"query_noise": [1.0]}}, ["a"]).startswith("config world_calibration: needs")


def test_trained_benchmark_names_a_dataset_of_this_config_and_a_tree():
    check_trained_benchmark({"dataset": "a", "trees": {"ehi+tree": "main"}}, ["a", "b"])
    assert refusal(check_trained_benchmark, {"dataset": "c", "trees": {"ehi+tree": "main"}}, ["a", "b"]) == \
        "config trained_benchmark.dataset 'c': not one of this config's datasets (a, b)"
    assert refusal(check_trained_benchmark, {"dataset": "a"}, ["a"]).startswith("config trained_benchmark: no trees")


def test_a_one_dataset_configs_trees_are_named_by_ablation_row():
    rows = {"floor": "indexer_init~ivf/floor~kmeans", "two_stage[0]": "freeze_layers~1"}
    bench = {"dataset": "a", "trees": {"ehi+tree": "main", "ehi-2stage+tree": "two_stage[0]"}}
    assert check_trained_benchmark(bench, ["a"], rows) == {"ehi+tree": "main", "ehi-2stage+tree": "freeze_layers~1"}
    bad = {"dataset": "a", "trees": {"ehi-2stage+tree": "two_stage[3]"}}
    assert refusal(check_trained_benchmark, bad, ["a"], rows) == (
        "config trained_benchmark.trees {'ehi-2stage+tree': 'two_stage[3]'}: not main or an ablation row; "
        "known: main, floor, two_stage[0]")


@pytest.mark.parametrize("name", ["de+exact", "ehi+faiss-ivf", "ehi", "ehi+no-such-search"])
def test_a_tree_name_that_is_no_tree_system_is_refused(name):
    """The benchmark searches a tree's index by its name's search half: de+exact would be timed as
    DE's exact search and the trees' section left empty."""
    for rows in (None, {"floor": "floor~kmeans"}):
        trees = check_trained_benchmark({"dataset": "a", "trees": {"ehi+tree": "main", name: "main"}}, ["a"], rows)
        said = refusal(check_tree_names, trees)
        assert said == (f"config trained_benchmark.trees: {name!r}: not a tree system (a tree is <label>+<tree search>, "
                        "the search one of tree, tree-pq, e.g. ehi+tree)")


def test_the_workflow_raises_no_config_error_of_its_own():
    """Checks live in ehi/, where they are tested; a rule file only calls them."""
    files = [REPO / "Snakefile", *(REPO / "workflow").rglob("*.smk")]
    raising = [f"{f.relative_to(REPO)}:{i}" for f in files for i, line in enumerate(f.read_text().splitlines(), 1)
               if "raise ConfigError" in line]
    assert not raising, raising
