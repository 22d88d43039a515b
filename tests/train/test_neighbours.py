"""ehi.train.neighbours: L_neighbour's nearest-document table and its anchor/partner batches."""

from types import SimpleNamespace

import numpy as np
import torch

from ehi.model.tree import TreeIndexer
from ehi.train.batches import EmbeddingCache
from ehi.train.neighbours import nearest_documents, neighbour_pairs, neighbour_term


def unit_rows(n, d=8, seed=0):
    x = np.random.default_rng(seed).standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_nearest_documents_is_the_exact_top_k_without_itself_in_any_chunking():
    emb = unit_rows(50)
    sims = emb @ emb.T
    np.fill_diagonal(sims, -np.inf)
    want = np.argsort(-sims, axis=1, kind="stable")[:, :5]
    for chunk in (7, 1024):
        got = nearest_documents(emb, 5, chunk=chunk)
        assert got.shape == (50, 5) and not (got == np.arange(50)[:, None]).any()
        np.testing.assert_array_equal(np.sort(got, axis=1), np.sort(want, axis=1))
    assert nearest_documents(emb[:4], 10).shape == (4, 3)  # k capped at N - 1


def test_pairs_are_anchors_then_one_of_their_neighbours():
    emb = unit_rows(40)
    cfg = SimpleNamespace(neighbour_k=3, neighbour_anchors=6, neighbour_temperature=0.3, path_layout="node")
    cache = EmbeddingCache(doc_emb=emb, q_emb=emb[:0])
    pairs = neighbour_pairs(cache, np.random.default_rng(0), cfg, "cpu").numpy()  # (12, d)
    assert pairs.shape == (12, 8) and cache.doc_knn.shape == (40, 3)  # the table is cached
    row_of = {tuple(np.round(r, 6)): i for i, r in enumerate(emb)}
    anchors = [row_of[tuple(np.round(r, 6))] for r in pairs[:6]]
    partners = [row_of[tuple(np.round(r, 6))] for r in pairs[6:]]
    assert len(set(anchors)) == 6  # drawn without replacement
    assert all(p in cache.doc_knn[a] for a, p in zip(anchors, partners))
    torch.manual_seed(0)
    loss = neighbour_term(cache, TreeIndexer(dim=8, height=1, branching=4), np.random.default_rng(0), cfg, "cpu")
    assert loss.ndim == 0 and torch.isfinite(loss) and loss.requires_grad
