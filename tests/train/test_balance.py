"""train.lambda_balance: the tree's load imbalance over random corpus documents, in the tree updates."""

import numpy as np
import pytest
import torch

from ehi.model.tree import TreeIndexer
from ehi.train.tree_fit import TreeFitter, balance_loss, with_balance


def test_balance_is_zero_when_even_and_b_minus_one_when_one_leaf_takes_all():
    docs = torch.randn(64, 8)
    tree = TreeIndexer(8, 1, 4)
    with torch.no_grad():
        for p in tree.parameters():
            p.zero_()  # every child probability 1/4: perfectly even
    assert balance_loss(tree, docs, np.random.default_rng(0)).item() == pytest.approx(0.0, abs=1e-6)
    with torch.no_grad():
        tree.W[0].bias[2] = 50.0  # everything to child 2
    assert balance_loss(tree, docs, np.random.default_rng(0)).item() == pytest.approx(3.0, abs=1e-4)


def test_the_term_spreads_a_piled_up_tree():
    torch.manual_seed(0)
    docs = torch.nn.functional.normalize(torch.randn(400, 8), dim=1)
    tree = TreeIndexer(8, 1, 8).standardize_(docs)
    with torch.no_grad():
        tree.W[0].bias[0] = 3.0  # most documents in leaf 0
    before = np.bincount(tree.assign_leaves(docs), minlength=8).max()
    zero = lambda rng: torch.zeros(())  # noqa: E731 (no pairs: the balance term alone)
    TreeFitter(tree, 1e-2).run(200, lambda rng: with_balance(zero, tree, docs, 1.0, rng), np.random.default_rng(0))
    assert np.bincount(tree.assign_leaves(docs), minlength=8).max() < before


def test_the_tree_updates_read_it(tiny_dataset, tmp_path):
    from ehi.model.encoder import load_encoder
    from ehi.model.tree import load_indexer
    from ehi.train.config import TrainConfig
    from ehi.train.loop import train

    def run(weight, out):
        cfg = TrainConfig(epochs=1, batch_size=8, height=1, branching=8, max_length=16, device="cpu",
                          encode_batch_size=32, indexer_steps=2, lambda_balance=weight, diagnostics=False)
        train(tiny_dataset, load_encoder("tiny-random", max_length=16, device="cpu", seed=0), cfg, out, progress=False)
        return load_indexer(out).state_dict()

    plain, balanced = run(0.0, tmp_path / "plain"), run(1.0, tmp_path / "balanced")
    assert any(not torch.equal(plain[k], balanced[k]) for k in plain)
