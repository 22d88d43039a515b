"""DE's training settings leave out exactly what only the tree reads."""

from dataclasses import fields

import pytest

from ehi.train.config import TrainConfig
from ehi.train.model_keys import TREE_ONLY, model_settings


def test_every_tree_only_key_is_a_training_setting():
    assert set(TREE_ONLY) <= {f.name for f in fields(TrainConfig)}


def test_de_gets_no_tree_key_and_ehi_gets_every_key():
    train = TrainConfig(branching=4, lambda_intra_leaf=0.25).to_dict()
    de, ehi = model_settings(train, "de"), model_settings(train, "ehi")
    assert not set(de) & set(TREE_ONLY) and de["use_tree"] is False and de["lr_encoder"] == train["lr_encoder"]
    assert ehi == {**train, "use_tree": True}
    assert TrainConfig.from_dict(de).use_tree is False  # still a complete TrainConfig
    with pytest.raises(ValueError):
        model_settings(train, "pre")
