"""The step log (train.diag_every): its numbers against direct computations, and a training that
logs is the training that does not, bit for bit, resumable without losing or repeating a row."""

import json
import math

import numpy as np
import pandas as pd
import pytest
import torch

from ehi.model.encoder import load_encoder
from ehi.model.tree import TreeIndexer
from ehi.model.tree_stats import leaf_occupancy
from ehi.train.batches import TrainData, refresh_cache
from ehi.train.checkpoint import set_aside_stale_checkpoint
from ehi.train.config import TrainConfig
from ehi.train.loop import train
from ehi.train.step import train_step
from ehi.train.step_log import STEP_LOG, is_due, loss_gradients, term_gradients

CPU = torch.device("cpu")


def encoder():
    return load_encoder("tiny-random", max_length=16, device="cpu", seed=0)


def config(**kw) -> TrainConfig:
    base = dict(epochs=2, batch_size=16, height=2, branching=2, max_length=16, lr_encoder=1e-3,
                lr_indexer=1e-2, device="cpu", encode_batch_size=32, diagnostics=False)
    return TrainConfig(**{**base, **kw})


def weights(out_dir) -> dict:
    from safetensors.torch import load_file

    files = sorted((out_dir / "encoder").glob("*.safetensors")) + [out_dir / "indexer.safetensors"]
    return {f"{f.name}:{k}": v for f in files for k, v in load_file(str(f)).items()}


def test_occupancy_of_a_hand_made_assignment():
    got = leaf_occupancy(np.array([0, 0, 0, 1, 1, 3]), n_leaves=4)  # sizes 3, 2, 0, 1
    share = np.array([3, 2, 1]) / 6
    assert got["leaf_empty"] == 1 and got["leaf_empty_fraction"] == 0.25
    assert got["leaf_max_over_mean"] == pytest.approx(3 / 1.5)
    assert got["leaf_entropy"] == pytest.approx(-(share * np.log(share)).sum() / math.log(4))
    assert leaf_occupancy(np.zeros(5, int), 4)["leaf_entropy"] == 0.0
    assert leaf_occupancy(np.arange(8) % 4, 4)["leaf_entropy"] == pytest.approx(1.0)


def test_each_terms_gradient_norm_is_that_weighted_term_alone(tiny_dataset):
    # GradCache too: its recomputed micro-batches must serve several backward passes of one graph
    cfg = config(lambda_intra_leaf=0.7, lambda_indexing=1.3, lambda_neighbour=0.5, neighbour_anchors=8, neighbour_k=3,
                 grad_cache_chunk=5)
    torch.manual_seed(0)
    enc = load_encoder("tiny-random", max_length=16, device="cpu", seed=0).eval()  # no dropout: one graph, re-read
    tree = TreeIndexer(enc.dim, cfg.height, cfg.branching)
    data = TrainData.from_dataset(tiny_dataset)
    cache = refresh_cache(data, enc, tree, cfg)
    terms, _ = train_step(np.arange(16), data, cache, np.random.default_rng(0), enc, tree, cfg, CPU)
    groups = {"tower": list(enc.parameters()), "router": list(tree.parameters())}
    opt = torch.optim.SGD([{"params": groups["tower"]}, {"params": groups["router"]}], lr=0.0)  # as make_optimizer's
    row = term_gradients(terms, cfg, opt)
    assert all(p.grad is None for ps in groups.values() for p in ps)  # the step's backward is untouched
    for name, weight in [("siamese", 1.0), ("indexing", 1.3), ("intra_leaf", 0.7), ("neighbour", 0.5)]:
        assert row[name] == pytest.approx(float(terms[name].detach()))
        (weight * terms[name]).backward(retain_graph=True)
        for group, params in groups.items():
            direct = math.sqrt(sum(float((p.grad.double() ** 2).sum()) for p in params if p.grad is not None))
            assert row[f"grad_{name}_{group}"] == pytest.approx(direct, rel=1e-5, abs=1e-12), (name, group)
            for p in params:
                p.grad = None
    assert row["grad_siamese_router"] == 0 and row["grad_neighbour_tower"] == 0  # what cannot reach, does not
    assert row["grad_indexing_tower"] > 0 and row["grad_indexing_router"] > 0
    terms["loss"].backward()
    total = loss_gradients(opt)
    assert total["grad_loss_tower"] > 0 and total["grad_loss_router"] > 0


def test_the_first_step_and_every_nth_are_diagnostic():
    assert [s for s in range(10) if is_due(s, 4)] == [0, 4, 8]
    assert not any(is_due(s, 0) for s in range(10))


def test_logging_changes_no_weight_and_off_writes_nothing(tiny_dataset, tmp_path):
    train(tiny_dataset, encoder(), config(), tmp_path / "off", progress=False)
    summary = train(tiny_dataset, encoder(), config(diag_every=3, indexer_steps=1), tmp_path / "on", progress=False)
    train(tiny_dataset, encoder(), config(indexer_steps=1), tmp_path / "off_updates", progress=False)
    assert not (tmp_path / "off" / STEP_LOG).exists()
    assert "step_log" not in json.loads((tmp_path / "off" / "checkpoint" / "state.json").read_text())
    a, b = weights(tmp_path / "off_updates"), weights(tmp_path / "on")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    log = pd.read_parquet(tmp_path / "on" / STEP_LOG)
    assert log["step"].tolist() == list(range(0, summary["steps"], 3))
    assert set(log["epoch"]) == {1, 2}
    assert {"loss", "siamese", "indexing", "intra_leaf", "tree_updates", "leaf_empty", "leaf_empty_fraction",
            "leaf_max_over_mean", "leaf_entropy", "grad_indexing_tower", "grad_indexing_router",
            "grad_loss_tower", "grad_loss_router"} <= set(log)
    assert log["occupancy_after_tree_updates"].tolist() == [s > 0 for s in log["step"]]
    assert (log["leaf_empty"] == log["leaf_empty_fraction"] * 4).all()


def test_a_resumed_run_keeps_every_row_once(tiny_dataset, tmp_path):
    cfg = config(diag_every=2)
    train(tiny_dataset, encoder(), cfg, tmp_path / "full", progress=False)
    train(tiny_dataset, encoder(), cfg, tmp_path / "part", stop_after_epoch=1, progress=False)
    first = pd.read_parquet(tmp_path / "part" / STEP_LOG)
    assert set(first["epoch"]) == {1}
    train(tiny_dataset, encoder(), cfg, tmp_path / "part", progress=False)
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "full" / STEP_LOG),
                                  pd.read_parquet(tmp_path / "part" / STEP_LOG))


def test_a_checkpoint_without_the_key_is_set_aside_when_logging_turns_on(tiny_dataset, tmp_path):
    train(tiny_dataset, encoder(), config(epochs=1), tmp_path, progress=False)
    state_file = tmp_path / "checkpoint" / "state.json"
    state = json.loads(state_file.read_text())
    del state["config"]["diag_every"]  # a checkpoint written before the key existed
    state_file.write_text(json.dumps(state))
    assert set_aside_stale_checkpoint(tmp_path, config(epochs=1)) is None  # its default: the same run
    assert set_aside_stale_checkpoint(tmp_path, config(epochs=1, diag_every=5)) is not None


def test_several_processes_are_refused_in_one_line(tiny_dataset, tmp_path):
    from ehi.train.distributed import Context
    from ehi.train.loop import _trainer

    with pytest.raises(ValueError, match="train.diag_every runs in one process only"):
        _trainer(tiny_dataset, encoder(), config(diag_every=5), "train", tmp_path, Context(rank=0, world=2), False)
