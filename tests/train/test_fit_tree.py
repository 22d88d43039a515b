"""ehi.fit_tree on a user's own embeddings: label-free, k-means start, from pairs; exported to FAISS."""

import numpy as np
import pytest

import ehi
from ehi.core.errors import UserError


def _clusters(seed=0, n_clusters=4, per=40, dim=16):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n_clusters, dim)) * 3
    docs = np.concatenate([c + rng.normal(size=(per, dim)) for c in centres]).astype(np.float32)
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    return docs, np.repeat(np.arange(n_clusters), per)


def _purity(index, labels):
    leaf = np.empty(len(labels), dtype=np.int64)
    for j in range(len(index.offsets) - 1):
        leaf[index.perm[index.offsets[j]:index.offsets[j + 1]]] = j
    return np.mean([np.bincount(labels[leaf == j]).max() / (leaf == j).sum() for j in np.unique(leaf)])


@pytest.mark.parametrize("kwargs", [{"steps": 60}, {"init": "kmeans"}], ids=["neighbour-loss", "kmeans"])
def test_label_free_trees_follow_the_clusters_and_a_full_beam_is_exact(kwargs):
    docs, labels = _clusters()
    index = ehi.fit_tree(docs, height=1, branching=4, batch_size=64, **kwargs)
    assert _purity(index, labels) > 0.9
    rows, _, _ = index.search(docs[:5], beam=4, k=3)
    assert rows[:, 0].tolist() == list(range(5))  # every leaf visited: each document finds itself


def test_pairs_route_queries_to_their_documents_leaves(tmp_path):
    docs, labels = _clusters(1)
    rng = np.random.default_rng(1)
    targets = rng.integers(0, len(docs), 80)
    queries = docs[targets] + 0.05 * rng.normal(size=(80, docs.shape[1])).astype(np.float32)
    pairs = np.stack([np.arange(80), targets], axis=1)
    index = ehi.fit_tree(docs, queries, pairs, height=2, branching=2, steps=80, batch_size=32, negatives=4)
    rows, _, _ = index.search(queries, beam=1, k=10)
    assert np.mean([t in r for t, r in zip(targets, rows)]) > 0.6  # one leaf of four, its document found
    index.save(tmp_path / "tree")
    exported = ehi.export_faiss(tmp_path / "tree", tmp_path / "tree.faiss", doc_ids=[f"d{i}" for i in range(len(docs))])
    assert (tmp_path / "tree.faiss").stat().st_size > 0 and exported is not None


def test_bad_input_names_the_argument():
    docs, _ = _clusters()
    with pytest.raises(UserError, match="query_emb go together"):
        ehi.fit_tree(docs, pairs=np.zeros((2, 2), dtype=int))
    with pytest.raises(UserError, match="doc_emb holds NaN"):
        ehi.fit_tree(np.full((4, 3), np.nan))
    with pytest.raises(UserError, match="outside"):
        ehi.fit_tree(docs, docs[:3], np.array([[5, 0]]))
    with pytest.raises(UserError, match="init must be"):
        ehi.fit_tree(docs, init="random")
    with pytest.raises(UserError, match=r"lower height or branching$"):  # its arguments, not config keys
        ehi.fit_tree(docs, height=2, branching=len(docs))


@pytest.mark.parametrize("kwargs, said", [
    ({"height": 6, "branching": 100}, "tree height=6, branching=100 has 1000000000000 leaves but the corpus has only 200"),
    ({"height": 0}, "height must be an integer >= 1, got 0"),
    ({"height": 1.5}, "height must be an integer >= 1, got 1.5"),
    ({"branching": 1}, "branching must be an integer >= 2, got 1"),
    ({"steps": -5}, "steps must be an integer >= 0, got -5"),
    ({"batch_size": 0}, "batch_size must be an integer >= 1, got 0"),
    ({"negatives": -1}, "negatives must be an integer >= 0, got -1"),
    ({"seed": 2**64}, "seed must be at most 1073741824"),
    ({"lr": float("nan")}, "lr must be a finite positive number, got nan"),
    ({"lr": 0}, "lr must be a finite positive number, got 0"),
    ({"threads": 0}, "threads must be an integer >= 1, got 0"),
])
def test_arguments_are_checked_before_anything_is_allocated(kwargs, said):
    """One line each, before a tree is built: height=6, branching=100 would allocate 40 GB."""
    docs = np.random.default_rng(0).standard_normal((200, 8)).astype(np.float32)
    with pytest.raises(UserError) as err:
        ehi.fit_tree(docs, **kwargs)
    assert str(err.value) == said or str(err.value).startswith(said), str(err.value)
    assert "\n" not in str(err.value)


def test_identical_documents_warn_that_leaves_are_empty():
    docs = np.tile(np.random.default_rng(0).standard_normal((1, 8)).astype(np.float32), (200, 1))
    with pytest.warns(UserWarning, match=r"fit_tree: leaf collapse: one leaf holds 100% of the 200 documents"):
        ehi.fit_tree(docs, height=1, branching=4, steps=5, batch_size=32)
