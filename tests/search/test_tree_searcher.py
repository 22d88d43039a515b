"""EHI's tree searcher (FAISS scanning EHI's leaves) returns, at every beam, the leaves of the
trained tree's own beam search and the exact scores of their documents."""

import numpy as np
import pytest
import torch

from ehi.model.tree import TreeIndexer
from ehi.search.exported import ExportedIndex
from ehi.search.tree_index import EHIIndex
from tests.search.vectors import random_unit

DIM = 16
SHAPES = [(1, 8, False), (1, 12, True), (2, 4, False), (2, 4, True), (3, 3, False)]


def _index(height, branching, per_node, n_docs=500, seed=0):
    rng = np.random.default_rng(seed)
    docs = random_unit(rng, n_docs, DIM)
    torch.manual_seed(seed)
    tree = TreeIndexer(DIM, height, branching, per_node=per_node).standardize_(docs)
    if per_node:  # non-zero per-parent directions, so the router's fold of Delta is exercised
        with torch.no_grad():
            for delta in tree.node_delta:
                delta.normal_(0, 0.3)
    return EHIIndex.build(docs, tree), docs, random_unit(rng, 40, DIM)


def reference(index: EHIIndex, docs: np.ndarray, queries: np.ndarray, beam: int, k: int):
    """The trained tree's torch beam search picks the leaves; float64 scores of their documents,
    best first (ties by corpus row), padded with -1 / -inf: (rows, scores, n_scored)."""
    with torch.no_grad():
        leaves = index.indexer.beam_search(torch.from_numpy(queries), beam)[0].numpy()  # (nq, beam)
    doc_leaf = index.doc_leaf
    rows = np.full((len(queries), k), -1, dtype=np.int64)
    scores = np.full((len(queries), k), -np.inf)
    n_scored = np.zeros(len(queries), dtype=np.int64)
    for i, q in enumerate(queries):
        cand = np.flatnonzero(np.isin(doc_leaf, leaves[i]))
        s = docs[cand].astype(np.float64) @ q.astype(np.float64)
        order = np.lexsort((cand, -s))[:k]
        rows[i, : len(order)], scores[i, : len(order)], n_scored[i] = cand[order], s[order], len(cand)
    return rows, scores, n_scored


@pytest.mark.parametrize("height,branching,per_node", SHAPES)
def test_same_leaves_and_exact_scores_at_every_beam(height, branching, per_node):
    index, docs, queries = _index(height, branching, per_node)
    searcher = ExportedIndex.build(index)
    for beam in range(1, index.indexer.n_leaves + 1):
        rows, scores, n_scored = searcher.search(queries, 20, beam)
        r_rows, r_scores, r_n = reference(index, docs, queries, beam, 20)
        np.testing.assert_array_equal(n_scored, r_n)  # the same leaves: the same documents scored
        np.testing.assert_array_equal(rows, r_rows)
        np.testing.assert_allclose(scores, r_scores, rtol=0, atol=1e-6)
