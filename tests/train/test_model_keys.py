"""DE's training settings leave out exactly what only the tree reads."""

import os
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest

from ehi.train.config import READS, TrainConfig
from ehi.train.model_keys import TREE_ONLY, model_settings

REPO = Path(__file__).resolve().parents[2]


def test_every_training_field_says_which_model_reads_it():
    unclassified = [f.name for f in fields(TrainConfig) if f.metadata.get(READS) not in ("tree", "shared")]
    assert not unclassified, f"declare these with tree(...) or shared(...): {unclassified}"


def test_tree_only_keys_are_the_fields_marked_tree():
    marked = {f.name for f in fields(TrainConfig) if f.metadata[READS] == "tree"}
    assert set(TREE_ONLY) == marked
    # the tree's own shape, losses and load balance; the encoder's settings stay DE's
    assert {"height", "branching", "lambda_indexing", "lambda_balance", "floor"} <= marked
    assert not {"lr_encoder", "margin", "siamese_loss", "epochs", "seed"} & marked


def test_de_gets_no_tree_key_and_ehi_gets_every_key():
    train = TrainConfig(branching=4, lambda_intra_leaf=0.25, lambda_balance=0.5, diag_every=10).to_dict()
    de, ehi = model_settings(train, "de"), model_settings(train, "ehi")
    assert not set(de) & set(TREE_ONLY) and de["use_tree"] is False and de["lr_encoder"] == train["lr_encoder"]
    assert ehi == {**train, "use_tree": True}
    assert TrainConfig.from_dict(de).use_tree is False  # still a complete TrainConfig
    with pytest.raises(ValueError):
        model_settings(train, "pre")


def test_a_log_key_off_is_left_out_so_no_training_reruns_for_it():
    train = TrainConfig(branching=4).to_dict()
    assert train["diag_every"] == 0
    without = {k: v for k, v in train.items() if k != "diag_every"}
    assert model_settings(train, "ehi") == {**without, "use_tree": True}  # the settings before the key existed
    assert model_settings({**train, "diag_every": 50}, "ehi")["diag_every"] == 50
    assert TrainConfig.from_dict(model_settings(train, "ehi")) == TrainConfig(branching=4, use_tree=True)


def test_reading_the_keys_imports_no_torch():
    code = "import sys; import ehi.train.model_keys; assert 'torch' not in sys.modules, 'torch'"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
