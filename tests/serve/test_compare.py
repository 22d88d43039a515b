"""``ehi compare DIR``: the folder's own config, its dry run through the pipeline, and what it
refuses before running anything (the full run is docs/embeddings.md's example, tests/test_docs_examples.py)."""

import pytest
import yaml

from ehi.core.errors import ConfigError
from ehi.data.vector_world import WorldConfig, generate_world
from ehi.serve.cli import main
from ehi.serve.compare import CONFIG, check_results_are_ours, dataset_name, snakemake_command


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    out = tmp_path_factory.mktemp("vectors") / "my vectors"
    generate_world(out, WorldConfig(n_docs=300, dim=16, n_train=60, n_dev=30, n_test=30))
    return out


def test_the_dataset_is_named_after_the_folder_and_its_config_names_nothing_else(world, tmp_path):
    assert dataset_name(world, None) == "my_vectors" and dataset_name(world, "mine") == "mine"
    with pytest.raises(ConfigError, match="pass --name"):
        dataset_name(world, "../x")
    command = snakemake_command(world, "my_vectors", 2, [0], [], tmp_path)
    own = tmp_path / "resources" / "my_vectors" / "compare.yaml"
    assert command[-2:] == [str(CONFIG), str(own)]
    assert yaml.safe_load(own.read_text()) == {
        "dataset": {"name": "my_vectors", "source": "embeddings", "path": str(world)},
        "encoder": {"name": str(world)}, "train": {"seeds": [0]}}


def test_results_another_dataset_made_are_refused(world, tmp_path):
    (tmp_path / "results" / "my_vectors").mkdir(parents=True)
    with pytest.raises(ConfigError, match="holds results of another dataset"):
        check_results_are_ours("my_vectors", world, tmp_path)
    check_results_are_ours("fresh", world, tmp_path)


def test_a_folder_that_is_not_vectors_is_one_line(tmp_path):
    with pytest.raises(SystemExit) as exc:
        main(["compare", str(tmp_path)])
    assert str(exc.value.code).startswith(f"ehi compare: error: {tmp_path} is not a vectors folder")


@pytest.mark.slow
def test_the_dry_run_plans_the_comparison(world, tmp_path, monkeypatch, capfd):
    monkeypatch.chdir(tmp_path)
    assert main(["compare", str(world), "-n"]) == 0
    out = capfd.readouterr().out
    for job in ("train_ehi", "dev_leaf_count", "search_index", "claims", "tables"):
        assert f"\n{job} " in out, out[-3000:]
    assert "de+" not in out and "resources/my_vectors/main/ehi/search_index" in out
