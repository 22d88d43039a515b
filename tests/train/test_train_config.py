"""TrainConfig is a checked section like the others (ehi.core.config.Section): an unknown key, a
value of the wrong type and a value out of range are each refused in one line naming the key."""

import dataclasses

import pytest

from ehi.core.errors import ConfigError
from ehi.train.config import TrainConfig


@pytest.mark.parametrize("values, said", [
    ({"epoch": 3}, r"unknown train key\(s\) \['epoch'\]"),
    ({"epochs": "3"}, r"train key 'epochs': '3' is not an integer"),
    ({"lr_encoder": "2e-5"}, r"train key 'lr_encoder': '2e-5' is not a number"),  # YAML reads 2e-5 as a string
    ({"batch_size": True}, r"train key 'batch_size': True is not an integer"),
    ({"dev_eval": "yes"}, r"train key 'dev_eval': 'yes' is not true or false"),
    ({"indexer_hidden": 1.5}, r"train key 'indexer_hidden': 1.5 is not an integer or null"),
    ({"epochs": 0}, r"train key 'epochs': 0 is below its minimum 1"),
    ({"temperature": 0.0}, r"train key 'temperature': 0.0 is not above 0"),
    ({"seed": 2 ** 30 + 1}, r"train key 'seed': 1073741825 is above its maximum 1073741824"),
    ({"diagnostic_beam": 0}, r"train key 'diagnostic_beam': 0 is below its minimum 1"),
    ({"warmup_ratio": float("nan")}, r"train key 'warmup_ratio': nan is not a finite number"),
    ({"path_layout": "leaf"}, r"train key 'path_layout': 'leaf' is not one of \['node', 'frontier'\]"),
    ({"siamese_loss": "hinge"}, r"train key 'siamese_loss': 'hinge' is not one of \[.*'triplet'\]"),
    ({"select": "dev"}, r"train: select: dev needs dev_eval$"),
])
def test_a_bad_train_value_is_refused_in_one_line_naming_it(values, said):
    with pytest.raises(ConfigError, match=said) as err:
        TrainConfig.from_dict(values)
    assert "\n" not in str(err.value)


def test_integers_are_numbers_and_nulls_are_taken_where_the_field_allows_them():
    cfg = TrainConfig.from_dict({"lr_encoder": 1, "indexer_hidden": None, "dev_cost": "work"})
    assert cfg.lr_encoder == 1 and cfg.indexer_hidden is None and cfg.to_dict()["dev_cost"] == "work"


def test_a_train_config_is_frozen_like_every_section():
    with pytest.raises(dataclasses.FrozenInstanceError):
        TrainConfig().epochs = 2
