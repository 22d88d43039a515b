"""The tree indexer: hand-computed path embeddings, routing, beam search against brute force."""

import math

import numpy as np
import pytest
import torch

from ehi.model.tree import TreeIndexer, load_indexer


def _softmax(a, b):
    return math.exp(a) / (math.exp(a) + math.exp(b)), math.exp(b) / (math.exp(a) + math.exp(b))


@pytest.fixture
def hand_tree():
    """H=2, B=2, dim=hidden=2 with U_h = identity and hand-set W_h (columns: one-hot parent, z)."""
    tree = TreeIndexer(dim=2, height=2, branching=2).double()
    with torch.no_grad():
        for u in tree.U:
            u.weight.copy_(torch.eye(2))
            u.bias.zero_()
        tree.W[0].weight.copy_(torch.tensor([[0.0, 1, 0], [0, 0, 1]]))  # logits = x
        tree.W[0].bias.zero_()
        # parent 0 adds (0.5, -0.5), parent 1 adds (1, 0) to the logits z = x
        tree.W[1].weight.copy_(torch.tensor([[0.5, 1.0, 1, 0], [-0.5, 0.0, 0, 1]]))
        tree.W[1].bias.zero_()
    return tree


def test_path_embedding_matches_hand_computed_h2_b2(hand_tree):
    x = torch.tensor([[1.0, 0.0], [0.0, 2.0]], dtype=torch.float64)
    out = hand_tree(x)
    p1, p2 = _softmax(1, 0)  # first item: level-1 logits (1, 0) -> child 0
    p3, p4 = _softmax(1.5, -0.5)  # parent 0: (1, 0) + (0.5, -0.5)
    q1, q2 = _softmax(0, 2)  # second item: level-1 logits (0, 2) -> child 1
    q3, q4 = _softmax(1, 2)  # parent 1: (0, 2) + (1, 0)
    node = [[p1, p2, p1 * p3, p1 * p4, 0, 0], [q1, q2, 0, 0, q2 * q3, q2 * q4]]
    frontier = [[p1, p2, p1 * p3, p1 * p4], [q1, q2, q2 * q3, q2 * q4]]
    torch.testing.assert_close(out.embedding("node"), torch.tensor(node, dtype=torch.float64))
    torch.testing.assert_close(out.embedding("frontier"), torch.tensor(frontier, dtype=torch.float64))
    assert out.leaf.tolist() == [0, 3]
    assert out.path.tolist() == [[0, 0], [1, 1]]
    assert hand_tree.path_embedding(x).shape == (2, 6)  # default layout: node


def test_level_logits_equal_w_times_one_hot_and_z():
    torch.manual_seed(0)
    tree = TreeIndexer(dim=5, height=3, branching=3, hidden=4)
    x = torch.randn(7, 5)
    for h in range(3):
        parents = torch.randint(0, 3**h, (7, 2))
        got = tree.level_logits(h, x, parents)  # (7, 2, 3)
        for j in range(2):
            one_hot = torch.nn.functional.one_hot(parents[:, j], 3**h).float()
            want = tree.W[h](torch.cat([one_hot, tree.U[h](x)], dim=1))
            torch.testing.assert_close(got[:, j], want)


def _all_leaf_logp(tree: TreeIndexer, x: torch.Tensor) -> torch.Tensor:
    """Brute force: log-probability of every leaf (n, B^H) from every node's softmax."""
    n, b = len(x), tree.branching
    logp = torch.zeros(n, 1)
    for h in range(tree.height):
        parents = torch.arange(b**h).expand(n, -1)
        child = torch.log_softmax(tree.level_logits(h, x, parents), -1)  # (n, B^h, B)
        logp = (logp[:, :, None] + child).flatten(1)
    return logp


@torch.no_grad()
def test_beam_search_full_beam_ranks_every_leaf_by_path_probability():
    torch.manual_seed(1)
    tree = TreeIndexer(dim=8, height=2, branching=4)
    x = torch.randn(10, 8)
    leaves, logp = tree.beam_search(x, beam=16)
    brute = _all_leaf_logp(tree, x)
    assert leaves.shape == (10, 16)
    assert all(sorted(row) == list(range(16)) for row in leaves.tolist())
    torch.testing.assert_close(logp, brute.gather(1, leaves))
    assert torch.all(logp[:, :-1] >= logp[:, 1:])
    torch.testing.assert_close(logp.exp().sum(1), torch.ones(10))


@torch.no_grad()
def test_beam_one_follows_the_argmax_path_and_beams_are_level_pruned():
    torch.manual_seed(2)
    tree = TreeIndexer(dim=8, height=3, branching=3)
    x = torch.randn(20, 8)
    leaves, _ = tree.beam_search(x, beam=1)
    assert torch.equal(leaves[:, 0], tree(x).leaf)
    leaves, logp = tree.beam_search(x, beam=4)
    assert leaves.shape == (20, 4) and logp.shape == (20, 4)
    assert all(len(set(row)) == 4 for row in leaves.tolist())
    with pytest.raises(ValueError, match="beam"):
        tree.beam_search(x, beam=28)


def test_assign_leaves_is_batch_size_independent_and_numpy():
    torch.manual_seed(3)
    tree = TreeIndexer(dim=6, height=2, branching=3)
    emb = np.random.default_rng(0).normal(size=(50, 6)).astype(np.float32)
    a = tree.assign_leaves(emb, batch_size=7)
    assert a.dtype == np.int64 and a.shape == (50,)
    np.testing.assert_array_equal(a, tree.assign_leaves(torch.from_numpy(emb), batch_size=1000))
    np.testing.assert_array_equal(a, tree(torch.from_numpy(emb)).leaf.numpy())


def test_gradient_flows_through_path_probabilities():
    torch.manual_seed(4)
    tree = TreeIndexer(dim=4, height=2, branching=2)
    x = torch.randn(3, 4, requires_grad=True)
    tree(x).embedding("node").sum().backward()
    assert x.grad.abs().sum() > 0
    assert all(p.grad is not None for p in tree.U.parameters())


def test_standardize_spreads_anisotropic_embeddings_over_the_leaves():
    rng = np.random.default_rng(6)
    emb = 3.0 + rng.normal(size=(2000, 16)).astype(np.float32)  # a large shared component
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    torch.manual_seed(6)
    tree = TreeIndexer(dim=16, height=2, branching=4).standardize_(emb)
    z = tree.U[1](torch.from_numpy(emb))
    torch.testing.assert_close(z.mean(0), torch.zeros(16), atol=1e-4, rtol=0)
    torch.testing.assert_close(z.std(0), torch.ones(16), atol=1e-4, rtol=0)
    sizes = np.bincount(tree.assign_leaves(emb), minlength=16)
    assert sizes.max() < 4 * sizes.mean() and (sizes > 0).sum() >= 12


def test_save_load_roundtrip(tmp_path):
    torch.manual_seed(5)
    tree = TreeIndexer(dim=4, height=2, branching=3, hidden=5, path_layout="frontier")
    tree.save(tmp_path)
    loaded = load_indexer(tmp_path)
    assert loaded.config() == tree.config()
    x = torch.randn(6, 4)
    torch.testing.assert_close(loaded(x).frontier, tree(x).frontier, rtol=0, atol=0)


@pytest.mark.parametrize("kwargs", [{"height": 0}, {"branching": 1}, {"path_layout": "flat"}])
def test_bad_shapes_are_rejected(kwargs):
    with pytest.raises(ValueError):
        TreeIndexer(dim=4, **kwargs)


def test_per_node_option_starts_as_the_shared_tree_and_gives_each_parent_its_own_split(tmp_path):
    torch.manual_seed(3)
    shared = TreeIndexer(dim=4, height=2, branching=3)
    torch.manual_seed(3)
    tree = TreeIndexer(dim=4, height=2, branching=3, per_node=True)
    x = torch.randn(7, 4)
    torch.testing.assert_close(tree(x).frontier, shared(x).frontier)  # zero residual at init
    assert "per_node" not in shared.config() and tree.config()["per_node"] is True
    with torch.no_grad():
        tree.node_delta[1][2].normal_()  # only parent 2's children move
    parents = torch.arange(3).repeat(7, 1)
    diff = tree.level_logits(1, x, parents) - shared.level_logits(1, x, parents)  # (7, 3, B)
    assert diff[:, :2].abs().max() == 0 and diff[:, 2].abs().max() > 0
    tree.save(tmp_path)
    loaded = load_indexer(tmp_path)
    torch.testing.assert_close(loaded(x).frontier, tree(x).frontier, rtol=0, atol=0)
    leaves, _ = loaded.beam_search(x, 9)
    assert leaves.shape == (7, 9)


@pytest.mark.parametrize("per_node", [False, True])
def test_gradients_are_the_same_on_every_thread_count(per_node):
    """The tree's backward adds rows' gradients in index order: the same bits run to run and at 1
    or 4 threads. Plain ``table[index]`` (atomics across threads) gave a new gradient every run
    at 8 threads for the per-node tree, and so a differently trained ablation per fresh clone."""
    torch.manual_seed(0)
    tree = TreeIndexer(dim=64, height=2, branching=8, per_node=per_node)
    for delta in tree.node_delta or []:
        torch.nn.init.normal_(delta, std=0.1)
    x = torch.randn(512, 64)

    def gradient() -> bytes:
        tree.zero_grad()
        out = tree(x)
        ((out.probs**2).sum() + out.frontier.sum()).backward()
        return b"".join(p.grad.numpy().tobytes() for p in tree.parameters() if p.grad is not None)

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        reference = gradient()
        torch.set_num_threads(4)
        assert all(gradient() == reference for _ in range(5))
    finally:
        torch.set_num_threads(before)
