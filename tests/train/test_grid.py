"""Training settings chosen on dev (ehi.train.grid): the grid taken out of the config, each model's
points, their variant paths, and a seed's settings at the choice."""

import os

import pytest

from ehi.core.config_schema import ablation_rows, ablation_variants
from ehi.core.errors import ConfigError
from ehi.train.grid import apply_choice, as_choices, copy_run, grid_points, model_grid, take_grid

ORDER = ["lr_encoder", "lr_indexer", "indexer_init", "lambda_intra_leaf", "floor"]


def test_take_grid_leaves_the_first_value_for_the_checks_and_returns_the_grid():
    train = {"lr_encoder": {"choose": [1e-4, 1e-3]}, "epochs": 3}
    assert take_grid(train) == {"lr_encoder": [1e-4, 1e-3]}
    assert train == {"lr_encoder": 1e-4, "epochs": 3}
    assert as_choices({"lr_encoder": [1e-4, 1e-3]}) == {"lr_encoder": {"choose": [1e-4, 1e-3]}}


@pytest.mark.parametrize("value, message", [
    ({"choose": []}, "at least one value"),
    ({"choose": 1e-4}, "at least one value"),
    ({"choose": [1e-4], "extra": 1}, "at least one value"),
    ({"choose": [1e-4, 1e-4]}, "repeats a value"),
])
def test_a_malformed_grid_is_refused_naming_its_key(value, message):
    with pytest.raises(ConfigError, match=f"config train.lr_encoder: .*{message}"):
        take_grid({"lr_encoder": value})


@pytest.mark.parametrize("key", ["seeds", "encoder_init"])
def test_what_names_runs_is_not_chosen_on_dev(key):
    with pytest.raises(ConfigError, match=f"train.{key}: .*not chosen on dev"):
        take_grid({key: {"choose": [[0], [1]]}})


def test_de_reads_no_tree_key_of_the_grid_and_a_row_fixes_its_own_keys():
    grid = {"lr_encoder": [1e-4, 1e-3], "lambda_intra_leaf": [0.0, 0.5]}
    assert model_grid(grid, "ehi") == grid
    assert model_grid(grid, "de") == {"lr_encoder": [1e-4, 1e-3]}  # one DE per rate, not per tree weight
    assert model_grid(grid, "ehi", fixed={"lr_encoder": 1e-4}) == {"lambda_intra_leaf": [0.0, 0.5]}


def test_points_are_named_as_ablation_rows_are_so_equal_settings_share_a_run():
    points = grid_points({}, {"lr_encoder": [1e-4, 1e-3]}, ORDER)  # main's: no key of its own
    assert points == {"lr_encoder~0.0001": {"lr_encoder": 1e-4}, "lr_encoder~0.001": {"lr_encoder": 1e-3}}
    row = {"indexer_init": "ivf", "floor": "kmeans"}
    [settings] = ablation_rows({"floor": [row]}, row, ORDER)["floor"]
    points = grid_points(settings, {"lr_encoder": [1e-3]}, ORDER)
    # the path an ablation row setting all three keys would have: the point trains once for both
    full = {**row, "lr_encoder": 1e-3}
    assert list(points) == ablation_variants({"r": [full]}, full, ORDER)["r"]
    assert list(points) == ["lr_encoder~0.001/indexer_init~ivf/floor~kmeans"]


def test_every_combination_is_a_point():
    points = grid_points({}, {"lr_encoder": [1e-4, 1e-3], "lambda_intra_leaf": [0.0, 0.5]}, ORDER)
    assert len(points) == 4 and {"lr_encoder": 1e-3, "lambda_intra_leaf": 0.5} in points.values()


def test_another_seed_trains_at_the_choice_and_nothing_else():
    settings = {"lr_encoder": {"choose": [1e-4, 1e-3]}, "epochs": 3}
    assert apply_choice(settings, {"lr_encoder": 1e-3}) == {"lr_encoder": 1e-3, "epochs": 3}
    with pytest.raises(ConfigError, match="not in its grid"):
        apply_choice(settings, {"lr_encoder": 5e-4})
    with pytest.raises(ConfigError, match="names no value"):
        apply_choice(settings, {})


def test_the_chosen_run_is_copied_without_its_working_state(tmp_path):
    run = tmp_path / "point"
    (run / "encoder").mkdir(parents=True)
    (run / "encoder" / "model.safetensors").write_bytes(b"weights")
    (run / "indexer.safetensors").write_bytes(b"tree")
    (run / "checkpoint").mkdir()
    (run / "checkpoint" / "state.pt").write_bytes(b"optimizer")
    target = tmp_path / "main"
    (target / "encoder").mkdir(parents=True)
    (target / "encoder" / "stale.bin").write_bytes(b"old")
    copy_run(run, target)
    assert (target / "encoder" / "model.safetensors").read_bytes() == b"weights"
    assert not (target / "encoder" / "stale.bin").exists()
    assert (target / "indexer.safetensors").read_bytes() == b"tree"
    assert not (target / "checkpoint").exists()
    assert os.path.samefile(target / "indexer.safetensors", run / "indexer.safetensors")  # linked, not copied


def test_a_whole_number_left_out_of_some_rows_stays_whole_in_every_path():
    rows = [{"lr_encoder": 1e-4, "indexer_steps": 0}, {"lr_encoder": 1e-5}]
    train = {"lr_encoder": 1e-4, "indexer_steps": 2}
    paths = ablation_variants({"screen": rows}, train, ["lr_encoder", "indexer_steps"])["screen"]
    assert paths == ["lr_encoder~0.0001/indexer_steps~0", "lr_encoder~1e-05/indexer_steps~2"]
