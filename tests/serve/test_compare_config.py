"""What ``ehi compare DIR`` runs, built in process: the decisive comparison where the folder holds
training judgements, the frozen study with ``--quick``, the timed tree with ``--time``, and the
refusals of a folder the trees cannot train or be chosen on."""

import pandas as pd
import pytest
import yaml

from ehi.core.errors import ConfigError
from ehi.data.vector_world import WorldConfig, generate_world
from ehi.serve import compare as compare_module
from ehi.serve.cli import main
from ehi.serve.compare_config import (DECISIVE, FROZEN, REPO, best_two_stage, check_judgements, own_config,
                                      search_index, timed_report, timed_section, variant_systems)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    out = tmp_path_factory.mktemp("vectors") / "mine"
    generate_world(out, WorldConfig(n_docs=200, dim=8, n_train=40, n_dev=20, n_test=20))
    return out


def read(path):
    return yaml.safe_load(path.read_text())


def test_the_decisive_recipe_is_webster_joints():
    """The decisive config trains what config/webster_joint.yaml trained for its answer: the same
    train block (the leaf count chosen on dev in place of webster's, no step logs), the same
    two-stage rows, the same timing settings."""
    decisive, joint = read(DECISIVE), read(REPO / "config" / "webster_joint.yaml")
    ours = {k: v for k, v in decisive["train"].items() if k != "branching"}
    theirs = {k: v for k, v in joint["train"].items() if k not in ("branching", "diag_every")}
    assert ours == theirs and decisive["train"]["pairs_per_epoch"] == 0
    assert decisive["train"]["branching"] == "auto"
    assert decisive["ablations"]["two_stage"] == joint["ablations"]["two_stage"]
    for key in ("hnsw_m", "max_frac", "rounds", "budget_cost"):
        assert decisive["trained_benchmark"][key] == joint["trained_benchmark"][key], key
    assert "dataset" not in decisive["trained_benchmark"]  # no benchmark unless --time names one


def test_every_peer_runs_on_both_vector_sets_and_no_tree_is_trained_jointly():
    decisive = read(DECISIVE)
    systems = decisive["search"]["systems"]
    for method in ("exact", "ivf-lists", "faiss-ivf", "scann", "faiss-hnsw"):
        assert f"pre+{method}" in systems and f"de+{method}" in systems, method
    assert not [s for s in systems if s.startswith("ehi+")]  # the main setting trains DE alone
    trees = variant_systems()
    assert set(trees) == {"ehi+tree", "ehi-floor+tree", "ehi-2stage+tree", "ehi-2stage-floor+tree"}
    rows = decisive["ablations"]
    for table in ("frozen", "two_stage"):  # each tree trained alone: the tower frozen whole
        assert all(row["freeze_layers"] > 0 for row in rows[table])
    assert {row["encoder_init"] for row in rows["two_stage"]} == {"de"}
    assert {row["encoder_init"] for row in rows["frozen"]} == {"pretrained"}


def test_a_folder_with_training_judgements_gets_the_decisive_run_and_quick_the_frozen_study(world, tmp_path):
    command = compare_module.snakemake_command(world, "mine", 2, None, [], tmp_path)
    own = tmp_path / "resources" / "mine" / "compare.yaml"
    assert command[-2:] == [str(DECISIVE), str(own)] and "all" in command
    assert read(own) == {"dataset": {"name": "mine", "source": "embeddings", "path": str(world)},
                         "towers": {"mine_linear": {"vectors": str(world), "kind": "linear"}},
                         "encoder": {"name": "resources/towers/mine_linear"}}
    command = compare_module.snakemake_command(world, "mine", 2, None, [], tmp_path, quick=True)
    assert command[-2:] == [str(FROZEN), str(own)]
    assert read(own) == {"dataset": {"name": "mine", "source": "embeddings", "path": str(world)},
                         "encoder": {"name": str(world)}, "train": {"seeds": [0]}}
    assert own_config(world, "mine", [3, 4], quick=True)["train"] == {"seeds": [3, 4]}
    assert own_config(world, "mine", [5], quick=False)["train"] == {"seeds": [5]}


@pytest.mark.parametrize("split", ["train", "dev"])
def test_a_folder_without_train_or_dev_judgements_is_refused_in_one_line(world, tmp_path, split):
    folder = tmp_path / "copy"
    folder.mkdir()
    for path in world.iterdir():
        if path.is_file():
            (folder / path.name).symlink_to(path)
    (folder / "qrels").mkdir()
    for other in {"train", "dev", "test"} - {split}:
        (folder / "qrels" / f"{other}.tsv").symlink_to(world / "qrels" / f"{other}.tsv")
    with pytest.raises(ConfigError, match=rf"has no {split} judgements \(qrels/{split}.tsv\)"):
        check_judgements(folder)
    with pytest.raises(SystemExit) as exc:
        main(["compare", str(folder), "--out", str(tmp_path / "out")])
    assert str(exc.value.code).startswith(f"ehi compare: error: {folder} has no {split} judgements")
    assert "\n" not in str(exc.value.code) and not (tmp_path / "out").exists()


def test_quick_and_time_together_are_refused(world, tmp_path):
    with pytest.raises(SystemExit) as exc:
        main(["compare", str(world), "--quick", "--time", "--out", str(tmp_path / "out")])
    assert "--time times the two-stage tree, which --quick does not train" in str(exc.value.code)


def write_log(results, tree, area, key="dev_tree_auc"):
    """A two-stage tree's training log whose kept epoch has dev area ``area``."""
    path = results / variant_systems()[tree][1] / "train_log" / "ehi.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"epoch": [0, 1], "step": [0, 10], key: [area / 2, area]}).to_parquet(path)


def test_the_timed_tree_is_the_two_stage_tree_with_the_larger_dev_area(tmp_path):
    results = tmp_path / "results" / "mine"
    assert best_two_stage(results) is None
    write_log(results, "ehi-2stage+tree", 0.2)
    write_log(results, "ehi-2stage-floor+tree", 0.3, key="dev_floor_auc")  # the floor's area, as it is selected on
    write_log(results, "ehi-floor+tree", 0.9, key="dev_floor_auc")  # a frozen tree is never timed
    assert best_two_stage(results) == "ehi-2stage-floor+tree"
    assert timed_section("mine", "ehi-2stage-floor+tree") == {"trained_benchmark": {
        "dataset": "mine", "trees": {"ehi-2stage-floor+tree": "two_stage[1]", "ehi-2stage-floor+tree-pq": "two_stage[1]"}}}
    write_log(results, "ehi-2stage+tree", 0.4)
    assert best_two_stage(results) == "ehi-2stage+tree"
    assert search_index("mine", False, "ehi-2stage+tree") == \
        f"resources/mine/{variant_systems()['ehi-2stage+tree'][1]}/ehi/search_index"
    assert search_index("mine", True, None) == "resources/mine/main/ehi/search_index"


def test_time_runs_the_benchmark_on_the_tree_dev_chose_and_says_where_its_report_is(world, tmp_path, monkeypatch,
                                                                                    capsys):
    """The pipeline's runs stood in for: the first trains (here: leaves the two-stage trees' logs),
    the second, once they are trained, times the tree dev chose; the closing lines name it."""
    out = tmp_path / "out"
    results = out / "results" / "mine"
    commands, configs = [], []

    def run(command, *_, **__):
        commands.append(command)
        configs.append(read(out / "resources" / "mine" / "compare.pending.yaml"))
        if len(commands) == 1:
            write_log(results, "ehi-2stage+tree", 0.25)
            write_log(results, "ehi-2stage-floor+tree", 0.2, key="dev_floor_auc")
        return 0

    monkeypatch.setattr(compare_module, "run_owned", run)
    assert compare_module.compare(world, out=out, time=True) == 0
    assert len(commands) == 2 and "trained_benchmark" not in configs[0]
    assert timed_report("mine") in commands[1] and "all" not in commands[1]
    assert configs[1]["trained_benchmark"]["trees"] == {"ehi-2stage+tree": "two_stage[0]",
                                                        "ehi-2stage+tree-pq": "two_stage[0]"}
    assert read(out / "resources" / "mine" / "compare.yaml") == configs[1]  # the record: the run as it finished
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("timing ehi-2stage+tree, the two-stage tree with the larger dev area")
    assert f"timed:       {out / timed_report('mine')}" in printed
    index = next(line.split()[1] for line in printed if line.startswith("index:"))
    assert index == str(out / search_index("mine", False, "ehi-2stage+tree"))


def test_without_time_one_run_and_no_benchmark(world, tmp_path, monkeypatch, capsys):
    commands = []
    monkeypatch.setattr(compare_module, "run_owned", lambda command, *_, **__: commands.append(command) or 0)
    assert compare_module.compare(world, out=tmp_path / "out", quick=True) == 0
    assert len(commands) == 1 and str(FROZEN) in commands[0]
    printed = capsys.readouterr().out
    assert "timed:" not in printed and f"index:       {tmp_path / 'out' / 'resources/mine/main/ehi/search_index'}" in printed
