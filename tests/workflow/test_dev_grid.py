"""A train key chosen on dev ({choose: [...]}) end to end on the test config: every point trained for
each model, the best on dev copied as the setting's model, another seed trained at the choice, the
test split searched for the chosen point only; and EHI started from the same seed's DE."""

import json
import filecmp

import pandas as pd
import pytest
import yaml

from ehi.report.dev_choice import kept_dev_value
from test_workflow import TEST_CONFIG, snakemake  # tests/workflow/test_workflow.py

GRIDDED = {
    "train": {"seeds": [0, 1], "lr_encoder": {"choose": [1.0e-4, 1.0e-3]}, "dev_eval": True, "select": "dev"},
    "search": {"systems": ["pre+exact", "de+exact", "ehi+tree", "ehi+exact"]},
    "ablation_systems": ["ehi+exact"],
    "ablations": {"from_de": [{"encoder_init": "de", "lr_encoder": 1.0e-4}]},
}
POINTS = ["lr_encoder~0.0001", "lr_encoder~0.001"]


@pytest.fixture(scope="module")
def grid_run(tmp_path_factory):
    work = tmp_path_factory.mktemp("grid")
    config = yaml.safe_load(open(TEST_CONFIG))
    for key, value in GRIDDED.items():
        config[key] = {**config.get(key, {}), **value} if key in ("train", "search") else value
    path = work / "grid.yaml"
    path.write_text(yaml.safe_dump(config))
    snakemake("all", "--cores", "2", "--configfile", str(path), workdir=work)
    return work / "results" / "test", work / "resources" / "test"


@pytest.mark.parametrize("model", ["de", "ehi"])
def test_the_setting_is_the_point_best_on_dev(grid_run, model):
    res, resources = grid_run
    logs = {p: pd.read_parquet(res / p / "train_log" / f"{model}.parquet") for p in POINTS}
    dev = {p: kept_dev_value(log)[2] for p, log in logs.items()}
    best = max(POINTS, key=lambda p: dev[p])
    choice = json.loads((res / "main" / "dev_grid" / f"{model}.json").read_text())
    assert choice["point"] == best and choice["dev_value"] == pytest.approx(dev[best])
    table = pd.read_parquet(res / "main" / "dev_grid" / f"{model}.parquet")
    assert sorted(table.point) == POINTS and table.chosen.sum() == 1
    assert pd.read_parquet(res / "main" / "train_log" / f"{model}.parquet").equals(logs[best])
    chosen, main = resources / best / model / "train" / "encoder", resources / "main" / model / "train" / "encoder"
    assert not filecmp.dircmp(chosen, main).diff_files
    # another seed trains at the choice
    summary = json.loads((resources / "seed~1" / model / "train" / "train_summary.json").read_text())
    assert summary["config"]["lr_encoder"] == choice["settings"]["lr_encoder"]


def test_test_is_searched_for_the_chosen_setting_only(grid_run):
    res, _ = grid_run
    for point in POINTS:
        assert not (res / point / "per_query").exists()
    assert (res / "main" / "per_query" / "ehi+tree.parquet").exists()
    assert "lr_encoder~0.001" in (res.parent / "tables" / "test_dev_grid.md").read_text()


def test_ehi_from_de_starts_at_the_same_seeds_trained_de(grid_run):
    res, _ = grid_run
    variant = "lr_encoder~0.0001/encoder_init~de"
    ehi = pd.read_parquet(res / variant / "train_log" / "ehi.parquet")
    de = pd.read_parquet(res / "main" / "train_log" / "de.parquet")
    _, kept, _ = kept_dev_value(de)
    # epoch 0 of EHI is the encoder it starts from, evaluated exactly on dev: DE's kept model
    start = ehi[ehi.epoch == 0]["dev_ndcg@10"].iloc[0]
    assert start == pytest.approx(de[de.epoch == kept]["dev_ndcg@10"].iloc[0])
