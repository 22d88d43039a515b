"""The numpy beam search equals TreeIndexer.beam_search (the torch one) leaf for leaf."""

import numpy as np
import pytest
import torch

from ehi.core.errors import SearchIndexError
from ehi.model.tree import TreeIndexer
from ehi.search.route import NumpyRouter


def _tree(height, branching, per_node, dim=16, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((400, dim)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    torch.manual_seed(seed)
    tree = TreeIndexer(dim, height, branching, hidden=12, per_node=per_node).standardize_(x)
    if per_node:
        with torch.no_grad():
            for delta in tree.node_delta:
                delta.normal_(0, 0.3)
    return tree, x


@pytest.mark.parametrize("height,branching", [(2, 4), (2, 7), (3, 3), (3, 4)])
@pytest.mark.parametrize("per_node", [False, True])
def test_numpy_beam_search_equals_torch(height, branching, per_node):
    tree, x = _tree(height, branching, per_node)
    router = NumpyRouter.from_indexer(tree)
    n_leaves = branching**height
    for beam in sorted({1, 2, branching, branching + 1, n_leaves // 2, n_leaves}):
        want_leaves, want_logp = tree.beam_search(torch.from_numpy(x), beam)
        leaves, logp = router.beam_search(x, beam)
        assert leaves.dtype == np.int64 and logp.dtype == np.float32 and leaves.shape == (len(x), beam)
        np.testing.assert_array_equal(leaves, want_leaves.numpy())
        np.testing.assert_allclose(logp, want_logp.numpy(), atol=1e-5, rtol=0)


def test_saved_router_routes_the_same_and_checks_its_input(tmp_path):
    tree, x = _tree(2, 5, per_node=True)
    router = NumpyRouter.from_indexer(tree)
    loaded = NumpyRouter.load(router.save(tmp_path / "router.safetensors"))
    assert loaded.threads == 1  # one BLAS thread unless asked otherwise
    for a, b in zip(loaded.beam_search(x, 7), router.beam_search(x, 7)):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="beam must be in 1..B"):
        router.beam_search(x, 26)
    with pytest.raises(ValueError, match=r"queries must be \(n, 16\)"):
        router.beam_search(x[:, :8], 2)


@pytest.mark.parametrize("height,branching", [(1, 8), (2, 4), (1, 600)])
def test_exact_ties_go_to_the_lower_node_id_in_both_beam_searches(height, branching):
    """A router with all-zero weights gives every child the same probability: every level is one
    exact tie, so the kept nodes must be the lowest ids (600 leaves: the partitioning path)."""
    dim = 16
    tree = TreeIndexer(dim, height, branching, hidden=12)
    with torch.no_grad():
        for param in tree.parameters():
            param.zero_()
    x = np.random.default_rng(0).standard_normal((5, dim)).astype(np.float32)
    router = NumpyRouter.from_indexer(tree)
    for beam in (1, 3, branching):
        want = np.tile(np.arange(beam), (len(x), 1))  # at height 2: the lowest parents' children in id order
        np.testing.assert_array_equal(tree.beam_search(torch.from_numpy(x), beam)[0].numpy(), want)
        np.testing.assert_array_equal(router.beam_search(x, beam)[0], want)


@pytest.mark.parametrize("per_node", [False, True])
def test_weights_whose_logits_overflow_float32_are_refused(per_node):
    tree, x = _tree(2, 4, per_node)
    NumpyRouter.from_indexer(tree).beam_search(x, 4)  # a trained scale routes
    largest = max(float(np.abs(v).max()) for v in NumpyRouter.from_indexer(tree).weights.values())
    for factor in (1e38 / largest, 1e39):  # every weight still finite in float32 / past its range
        with np.errstate(over="ignore"), pytest.raises(SearchIndexError, match="routing weights"):
            NumpyRouter({k: v * factor for k, v in NumpyRouter.from_indexer(tree).weights.items()}, 2, 4)
    with pytest.raises(SearchIndexError, match=r"A\.1 hold NaN or inf"):
        weights = NumpyRouter.from_indexer(tree).weights
        NumpyRouter({**weights, "A.1": weights["A.1"] * np.nan}, 2, 4)
