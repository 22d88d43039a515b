"""EHIIndex: full beam = exact search, budgets from real leaf sizes, save/load round trip, the
folder's FAISS file searched by plain faiss with the queries' own dimension, documents stored once."""

import json

import faiss
import numpy as np
import pytest
import torch

from ehi.core.errors import SearchIndexError
from ehi.search.exported import load_export
from ehi.search.tree_index import EHIIndex
from ehi.model.tree import TreeIndexer
from tests.search.vectors import random_unit

N, DIM, K = 300, 16, 10


@pytest.fixture(scope="module")
def setup():
    rng = np.random.default_rng(0)
    torch.manual_seed(0)
    tree = TreeIndexer(dim=DIM, height=2, branching=4)  # 16 leaves
    docs, queries = random_unit(rng, N, DIM), random_unit(rng, 25, DIM)
    return EHIIndex.build(docs, tree, batch_size=64), docs, queries


def test_build_groups_documents_by_leaf(setup):
    index, docs, _ = setup
    assert index.leaf_sizes.sum() == N and len(index.leaf_sizes) == 16
    assert (index.leaf_sizes > 0).sum() > 4  # a random tree on isotropic data spreads documents
    np.testing.assert_array_equal(index.doc_leaf, index.indexer.assign_leaves(docs))
    np.testing.assert_array_equal(np.sort(index.perm), np.arange(N))
    np.testing.assert_array_equal(index.doc_emb.numpy(), docs[index.perm])


def test_full_beam_equals_exact_search(setup):
    index, docs, queries = setup
    rows, scores, n_scored = index.search(queries, beam=16, k=K)
    exact = queries @ docs.T  # (nq, N)
    want_rows = np.argsort(-exact, axis=1, kind="stable")[:, :K]
    np.testing.assert_array_equal(rows, want_rows)
    np.testing.assert_allclose(scores, np.take_along_axis(exact, want_rows, 1), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(n_scored, np.full(len(queries), N))


def test_documents_scored_grow_with_beam_and_equal_visited_leaf_sizes(setup):
    index, docs, queries = setup
    previous = np.zeros(len(queries), dtype=np.int64)
    for beam in (1, 2, 4, 8, 16):
        rows, scores, n_scored = index.search(queries, beam=beam, k=K)
        leaves = index.indexer.beam_search(torch.from_numpy(queries), beam)[0].numpy()
        np.testing.assert_array_equal(n_scored, index.leaf_sizes[leaves].sum(1))
        assert np.all(n_scored >= previous)
        previous = n_scored
        # every hit lies in a visited leaf and carries its exact inner product, best first
        hit = rows >= 0
        assert np.all(np.isin(index.doc_leaf[rows[hit]], leaves.ravel()))
        in_beam = np.array([np.isin(index.doc_leaf[r[r >= 0]], beam).all() for r, beam in zip(rows, leaves)])
        assert in_beam.all()
        exact = np.einsum("qd,qkd->qk", queries, docs[np.maximum(rows, 0)])
        np.testing.assert_allclose(scores[hit], exact[hit], rtol=1e-5, atol=1e-6)
        assert np.all(np.diff(np.where(hit, scores, -np.inf), axis=1) <= 0)
        assert np.all(hit.sum(1) == np.minimum(K, n_scored))


def test_short_candidate_lists_are_padded(setup):
    index, _, queries = setup
    rows, scores, n_scored = index.search(queries, beam=1, k=N)
    for r, s, n in zip(rows, scores, n_scored):
        assert (r >= 0).sum() == n and np.all(r[n:] == -1) and np.all(np.isneginf(s[n:]))


def test_a_query_alone_gets_what_it_gets_in_a_batch(setup):
    index, _, queries = setup
    batch = index.search(queries, beam=4, k=K)
    alone = [index.search(queries[i : i + 1], beam=4, k=K) for i in range(len(queries))]
    for part, whole in zip(zip(*alone), batch):
        np.testing.assert_array_equal(np.concatenate(part), whole)


def test_save_load_search_is_identical(setup, tmp_path):
    index, _, queries = setup
    index.save(tmp_path / "index")
    assert sorted(p.name for p in (tmp_path / "index").iterdir()) == [
        "index.faiss", "index.faiss.json", "index.faiss.router.safetensors", "index.json", "indexer.json",
        "indexer.safetensors"]
    loaded = EHIIndex.load(tmp_path / "index")
    loaded.searcher = lambda **_: pytest.fail("a loaded index searches its saved export, not a rebuilt one")
    export = load_export(tmp_path / "index" / "index.faiss")  # what the pipeline's tree searches load
    for beam in (1, 3, 16):
        for x, y, z in zip(index.search(queries, beam, K), loaded.search(queries, beam, K), export.search(queries, K, beam)):
            np.testing.assert_array_equal(x, y)
            np.testing.assert_array_equal(x, z)
    for name in ("doc_emb", "offsets", "perm"):  # the arrays read back from the export's lists
        np.testing.assert_array_equal(np.asarray(getattr(loaded, name)), np.asarray(getattr(index, name)))
    index.save(tmp_path / "index")  # overwriting an existing index works
    assert EHIIndex.load(tmp_path / "index").n_docs == N
    loaded.save(tmp_path / "again")  # a loaded index writes the export it was loaded with
    assert (tmp_path / "again" / "index.faiss").read_bytes() == (tmp_path / "index" / "index.faiss").read_bytes()


def _index_64d(n_docs: int = 2000, leaves: int = 32):
    rng = np.random.default_rng(7)
    docs, queries = random_unit(rng, n_docs, 64), random_unit(rng, 50, 64)
    torch.manual_seed(0)
    return EHIIndex.build(docs, TreeIndexer(64, 1, leaves).standardize_(docs)), docs, queries


def test_the_folders_faiss_file_searches_64d_queries_as_ehi_does(tmp_path):
    """Drop-in: plain faiss.read_index on the folder's file, nprobe = beam, 64-d queries as they are."""
    index, _, queries = _index_64d()
    index.save(tmp_path / "index")
    plain = faiss.read_index(str(tmp_path / "index" / "index.faiss"))
    assert plain.d == 64 and plain.ntotal == index.n_docs
    for beam in (1, 4, 32):
        faiss.extract_index_ivf(plain).nprobe = beam
        scores, rows = plain.search(queries, K)
        want_rows, want_scores, _ = index.search(queries, beam, K)
        np.testing.assert_array_equal(np.where(rows < 0, -1, rows), want_rows)
        np.testing.assert_allclose(np.where(rows < 0, -np.inf, scores), want_scores, rtol=1e-6, atol=1e-6)


def test_an_index_folder_holds_the_vectors_once(tmp_path):
    """The folder's bytes against the vectors': one float32 copy (plus one routing coordinate a
    vector, the id map and the tree), not two (which would be over 2x)."""
    index, docs, _ = _index_64d()
    index.save(tmp_path / "index")
    folder = sum(f.stat().st_size for f in (tmp_path / "index").iterdir())
    assert docs.nbytes < folder < 1.35 * docs.nbytes, (folder, docs.nbytes)


def test_a_folder_of_the_older_layout_is_refused_in_one_line(setup, tmp_path):
    index, _, _ = setup
    index.save(tmp_path / "index")
    meta = json.loads((tmp_path / "index" / "index.json").read_text())
    (tmp_path / "index" / "index.json").write_text(json.dumps({**meta, "format_version": 1}))
    with pytest.raises(SearchIndexError, match=r"^[^\n]*index format 1, this ehi reads format 2[^\n]*build the index again"):
        EHIIndex.load(tmp_path / "index")


def test_beam_out_of_range_is_rejected(setup):
    index, _, queries = setup
    with pytest.raises(ValueError, match="beam"):
        index.search(queries, beam=17, k=K)
