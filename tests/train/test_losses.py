"""EHI's losses: finite-difference gradients (float64), zero where they should be, path cosine."""

import pytest
import torch
import torch.nn.functional as F

from ehi.model.tree import TreeIndexer, TreeOutput
from ehi.train.losses.objective import ehi_loss, indexing_loss, intra_leaf_loss, neighbour_loss, path_cosine
from ehi.train.losses.pairwise import infonce_loss, triplet_loss
from ehi.train.losses.registry import SIAMESE_LOSSES

gen = torch.Generator().manual_seed(0)


def _rand(*shape, grad=True):
    return torch.rand(*shape, generator=gen, dtype=torch.float64).mul(2).sub(1).requires_grad_(grad)


MASK = torch.tensor([[True, False, True, True], [True, True, True, False], [False, True, True, True]])


def test_registry_names():
    assert {"triplet", "infonce"} <= set(SIAMESE_LOSSES)


@pytest.mark.parametrize("fn", [triplet_loss, infonce_loss])
def test_siamese_losses_match_finite_differences(fn):
    pos, neg = _rand(3), _rand(3, 4)
    assert torch.autograd.gradcheck(lambda p, n: fn(p, n, MASK, margin=0.3, temperature=0.5), (pos, neg))


def test_triplet_value_and_zero_when_margin_met():
    pos = torch.tensor([0.9, 0.5])
    neg = torch.tensor([[0.1, 0.85], [0.6, -1.0]])
    mask = torch.tensor([[True, False], [True, True]])
    # valid pairs: (0.9 vs 0.1) -> 0, (0.5 vs 0.6) -> 0.2, (0.5 vs -1) -> 0; masked 0.85 ignored
    assert triplet_loss(pos, neg, mask, margin=0.1).item() == pytest.approx(0.2 / 3)
    assert triplet_loss(pos, neg - 1.0, mask, margin=0.1).item() == 0.0
    assert triplet_loss(pos, neg, torch.zeros_like(mask), margin=0.1).item() == 0.0


def test_infonce_matches_cross_entropy_and_is_zero_without_negatives():
    pos, neg = _rand(3, grad=False), _rand(3, 4, grad=False)
    logits = torch.cat([pos[:, None], neg.masked_fill(~MASK, -torch.inf)], 1) / 0.1
    want = F.cross_entropy(logits, torch.zeros(3, dtype=torch.long))
    torch.testing.assert_close(infonce_loss(pos, neg, MASK, temperature=0.1), want)
    assert infonce_loss(pos, neg, torch.zeros_like(MASK)).item() == 0.0


def _tree_output(n, height=2, branching=3, seed=0, grad=True):
    g = torch.Generator().manual_seed(seed)
    probs = torch.softmax(torch.randn(n, height, branching, generator=g, dtype=torch.float64), -1)
    path = torch.randint(0, branching, (n, height), generator=g)
    path[0] = 0  # make sure some pairs share a subtree
    reach = torch.cat([torch.ones(n, 1, dtype=torch.float64),
                       torch.cumprod(probs.gather(2, path[:, :, None])[:, :-1, 0], 1)], 1)
    frontier = (reach[:, :, None] * probs).detach().requires_grad_(grad)
    leaf = (path * torch.tensor([branching ** (height - 1 - h) for h in range(height)])).sum(1)
    return TreeOutput(probs, frontier, path, leaf)


@pytest.mark.parametrize("layout", ["node", "frontier"])
def test_path_cosine_equals_cosine_of_materialised_embeddings(layout):
    a, b = _tree_output(4, seed=1), _tree_output(5, seed=2)
    b.path[1] = a.path[2]  # same full path -> all blocks overlap
    want = F.normalize(a.embedding(layout), dim=1) @ F.normalize(b.embedding(layout), dim=1).T
    torch.testing.assert_close(path_cosine(a, b, layout), want)


@pytest.mark.parametrize("layout", ["node", "frontier"])
def test_indexing_loss_matches_finite_differences(layout):
    q, d = _tree_output(3, seed=3), _tree_output(4, seed=4)
    pos_idx = torch.tensor([0, 1, 2])

    def loss(qf, df):
        return indexing_loss(TreeOutput(q.probs, qf, q.path, q.leaf), TreeOutput(d.probs, df, d.path, d.leaf),
                             pos_idx, MASK, margin=0.9, layout=layout)

    assert torch.autograd.gradcheck(loss, (q.frontier, d.frontier))


def test_indexing_loss_zero_when_negatives_sit_in_another_subtree():
    one_hot = torch.tensor([[[1.0, 0.0], [1.0, 0.0]]])
    q = TreeOutput(one_hot, one_hot, torch.tensor([[0, 0]]), torch.tensor([0]))
    other = torch.tensor([[[0.0, 1.0], [0.0, 1.0]]])
    docs = TreeOutput(torch.cat([one_hot, other]), torch.cat([one_hot, other]),
                      torch.tensor([[0, 0], [1, 1]]), torch.tensor([0, 3]))
    mask = torch.tensor([[False, True]])
    assert indexing_loss(q, docs, torch.tensor([0]), mask, margin=0.5).item() == 0.0


def test_indexing_loss_through_the_indexer_matches_finite_differences():
    torch.manual_seed(5)
    tree = TreeIndexer(dim=4, height=2, branching=2).double()
    x = torch.randn(6, 4, dtype=torch.float64, requires_grad=True)
    mask = torch.ones(3, 3, dtype=torch.bool).fill_diagonal_(False)

    def loss(inp):
        return indexing_loss(tree(inp[:3]), tree(inp[3:]), torch.arange(3), mask, margin=1.5)

    assert torch.autograd.gradcheck(loss, (x,))


def test_intra_leaf_loss_only_counts_negatives_in_the_positives_leaf():
    pos = _rand(3)
    neg = _rand(3, 4)
    leaf = torch.tensor([0, 1, 0, 2])  # batch documents' leaves; positives are columns 0, 1, 2
    pos_idx = torch.tensor([0, 1, 2])
    same = torch.tensor([[1, 0, 1, 0], [0, 1, 0, 0], [1, 0, 1, 0]], dtype=torch.bool)
    want = triplet_loss(pos, neg, MASK & same, margin=0.4)
    torch.testing.assert_close(intra_leaf_loss(pos, neg, MASK, leaf, pos_idx, margin=0.4), want)
    assert torch.autograd.gradcheck(lambda p, n: intra_leaf_loss(p, n, MASK, leaf, pos_idx, margin=0.4), (pos, neg))
    lonely = torch.tensor([0, 1, 2, 3])  # every document alone in its leaf
    mask = MASK.clone()
    mask[torch.arange(3), pos_idx] = False  # a query's own positive is never its negative
    assert intra_leaf_loss(pos, neg, mask, lonely, pos_idx, margin=5.0).item() == 0.0


def test_ehi_loss_is_the_weighted_sum_and_de_has_only_siamese():
    q = F.normalize(_rand(3, 4, grad=False), dim=1)
    d = F.normalize(_rand(4, 4, grad=False), dim=1)
    qt, dt = _tree_output(3, seed=6), _tree_output(4, seed=7)
    pos_idx = torch.tensor([0, 1, 2])
    terms = ehi_loss(q, d, pos_idx, MASK, qt, dt, lambda_siamese=0.5, lambda_indexing=2.0,
                     lambda_intra_leaf=3.0, margin=0.5, margin_indexing=0.5)
    total = 0.5 * terms["siamese"] + 2.0 * terms["indexing"] + 3.0 * terms["intra_leaf"]
    torch.testing.assert_close(terms["loss"], total)
    assert terms["indexing"] > 0
    de = ehi_loss(q, d, pos_idx, MASK, siamese_loss="infonce")
    assert de["indexing"] == 0 and de["intra_leaf"] == 0
    torch.testing.assert_close(de["loss"], de["siamese"])


def test_neighbour_loss_is_infonce_over_path_cosine_and_prefers_shared_paths():
    a, b = _tree_output(5, seed=1), _tree_output(5, seed=2)
    sim = path_cosine(a, b)
    want = F.cross_entropy(sim / 0.3, torch.arange(5))
    torch.testing.assert_close(neighbour_loss(a, b, temperature=0.3), want)
    # anchors whose partner shares their whole path (identical tree output) score lower
    same = neighbour_loss(a, _tree_output(5, seed=1), temperature=0.3)
    assert float(same.detach()) < float(want.detach())
