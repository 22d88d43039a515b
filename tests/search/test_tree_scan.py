"""ScanIndex (EHI routes, FAISS scans) returns what EHIIndex.search returns."""

import numpy as np
import pytest
import torch

from ehi.search.tree_index import EHIIndex
from ehi.model.tree import TreeIndexer
from ehi.search.tree_scan import ScanIndex


def _tree(docs: np.ndarray, height: int = 2, branching: int = 4) -> TreeIndexer:
    torch.manual_seed(0)
    return TreeIndexer(docs.shape[1], height, branching).standardize_(docs)


def _unit(rng, n, d):
    x = rng.standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _integer_data(rng, n_docs=300, n_queries=40, dim=8):
    """Small-integer vectors whose inner products are exact in float32 (any summation order) and
    all distinct per query: column 0 spaces the documents 64 apart, the rest adds at most 56."""
    docs = rng.integers(-4, 5, (n_docs, dim)).astype(np.float32)
    docs[:, 0] = 64 * rng.permutation(n_docs)
    queries = rng.integers(-1, 2, (n_queries, dim)).astype(np.float32)
    queries[:, 0] = rng.choice([-1, 1], n_queries)
    return docs, queries


@pytest.mark.parametrize("beam,k", [(1, 5), (3, 10), (16, 50), (16, 400)])
def test_same_results_exactly_on_integer_data(beam, k):
    rng = np.random.default_rng(0)
    docs, queries = _integer_data(rng)
    index = EHIIndex.build(docs, _tree(docs / 64))  # the tree sees rescaled vectors; routing is all it does
    rows, scores, n_scored = index.search(queries, beam, k)
    for scan in (ScanIndex.from_index(index), ScanIndex.build(docs, index.indexer)):
        s_rows, s_scores, s_n = scan.search(queries, k, beam)
        np.testing.assert_array_equal(s_rows, rows)
        np.testing.assert_array_equal(s_scores, scores)  # -inf where padded, on both sides
        np.testing.assert_array_equal(s_n, n_scored)


@pytest.mark.parametrize("beam", [1, 4, 9, 27])
def test_same_results_on_float_data(beam):
    rng = np.random.default_rng(1)
    docs, queries = _unit(rng, 500, 16), _unit(rng, 30, 16)
    index = EHIIndex.build(docs, _tree(docs, height=3, branching=3))
    rows, scores, n_scored = index.search(queries, beam, 20)
    s_rows, s_scores, s_n = ScanIndex.build(docs, index.indexer).search(queries, 20, beam)
    np.testing.assert_array_equal(s_rows, rows)
    np.testing.assert_array_equal(s_n, n_scored)
    np.testing.assert_allclose(s_scores, scores, rtol=1e-5, atol=1e-6)  # summation order differs


def test_full_beam_is_exact_search():
    rng = np.random.default_rng(2)
    docs, queries = _unit(rng, 200, 8), _unit(rng, 10, 8)
    scan = ScanIndex.build(docs, _tree(docs), route_threads=1)
    rows, _, n_scored = scan.search(queries, 10, scan.full_budget)
    assert torch.get_num_threads() >= 1  # the routing's thread setting was restored
    np.testing.assert_array_equal(rows, np.argsort(-(queries @ docs.T), axis=1)[:, :10])
    assert (n_scored == len(docs)).all()
