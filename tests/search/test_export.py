"""EHI's index exported to FAISS: for H = 1 a plain faiss.read_index returns EHIIndex.search's results."""

import json

import faiss
import numpy as np
import pytest
import torch

from ehi.model.tree import TreeIndexer
from ehi.search.exported import ExportError, ExportedIndex, load_export, meta_path, router_path
from ehi.search.tree_index import EHIIndex
from tests.search.vectors import random_unit

DIM = 16


def _index(height, branching, n_docs=600, per_node=False, seed=0):
    rng = np.random.default_rng(seed)
    docs = random_unit(rng, n_docs, DIM)
    torch.manual_seed(seed)
    tree = TreeIndexer(DIM, height, branching, per_node=per_node).standardize_(docs)
    if per_node:  # non-zero per-parent directions, so the fold of Delta is exercised
        with torch.no_grad():
            for delta in tree.node_delta:
                delta.normal_(0, 0.3)
    return EHIIndex.build(docs, tree), random_unit(rng, 40, DIM)


def _faiss_search(path, queries, beam, k):
    """What a FAISS user does with the file: read it, set nprobe, search the embeddings as they are."""
    index = faiss.read_index(str(path))
    assert index.d == queries.shape[1]
    faiss.extract_index_ivf(index).nprobe = beam
    scores, rows = index.search(queries, k)
    return rows, scores, json.loads(meta_path(path).read_text())


@pytest.mark.parametrize("per_node", [False, True])
def test_height_one_export_is_ehi_search_at_every_beam(tmp_path, per_node):
    index, queries = _index(1, 12, per_node=per_node)
    path = ExportedIndex.build(index, doc_ids=[f"d{i}" for i in range(index.n_docs)]).write(tmp_path / "ehi.faiss")
    loaded = load_export(path)
    for beam in range(1, 13):
        rows, scores, n_scored = index.search(queries, beam, 20)
        f_rows, f_scores, meta = _faiss_search(path, queries, beam, 20)
        np.testing.assert_array_equal(np.where(f_rows < 0, -1, f_rows), rows)
        np.testing.assert_allclose(np.where(f_rows < 0, -np.inf, f_scores), scores, rtol=1e-6, atol=1e-6)
        e_rows, e_scores, e_n = loaded.search(queries, 20, beam)
        np.testing.assert_array_equal(e_rows, rows)
        np.testing.assert_array_equal(e_n, n_scored)  # documents scored = summed sizes of the visited leaves
        np.testing.assert_array_equal(loaded.search_ids(queries, 20, beam)[0], rows)
    assert meta["doc_ids"][5] == "d5" and meta["exact_in_faiss"] and meta["faiss_dim"] == DIM + 1


def test_height_one_export_scores_are_bit_identical_on_integer_data(tmp_path):
    """Small-integer vectors have inner products exact in float32 in any summation order, so the
    scores can be compared bit for bit (column 0 spaces the documents 64 apart: no ties)."""
    rng = np.random.default_rng(3)
    docs = rng.integers(-4, 5, (300, DIM)).astype(np.float32)
    docs[:, 0] = 64 * rng.permutation(300)
    queries = rng.integers(-1, 2, (30, DIM)).astype(np.float32)
    queries[:, 0] = rng.choice([-1, 1], 30)
    torch.manual_seed(0)
    index = EHIIndex.build(docs, TreeIndexer(DIM, 1, 10).standardize_(docs / 64))
    path = ExportedIndex.build(index).write(tmp_path / "int.faiss")
    for beam in range(1, 11):
        rows, scores, _ = index.search(queries, beam, 50)
        f_rows, f_scores, _ = _faiss_search(path, queries, beam, 50)
        np.testing.assert_array_equal(np.where(f_rows < 0, -1, f_rows), rows)
        np.testing.assert_array_equal(np.where(f_rows < 0, -np.inf, f_scores), scores)


@pytest.mark.parametrize("nbits", [4, 8])
def test_pq_leaves_with_every_candidate_reranked_equal_flat_leaves(tmp_path, nbits):
    index, queries = _index(1, 8, n_docs=800)
    flat = ExportedIndex.build(index)
    pq = load_export(ExportedIndex.build(index, pq_m=4, nbits=nbits, rerank=index.n_docs).write(tmp_path / "pq.faiss"))
    assert pq.faiss_dim == DIM + DIM // 4 and pq.meta["pq"]["sub_quantizers"] == 5
    for beam in (1, 3, 8):
        rows, scores, n_scored = flat.search(queries, 10, beam)
        for p_rows, p_scores, *rest in (pq.search(queries, 10, beam), pq.search_ids(queries, 10, beam)):
            np.testing.assert_array_equal(p_rows, rows)
            np.testing.assert_allclose(p_scores, scores, rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(pq.search(queries, 10, beam)[2], n_scored)
    unranked = ExportedIndex.build(index, pq_m=4, nbits=nbits)
    docs = index.doc_emb.numpy()[np.argsort(index.perm)]  # corpus order
    np.testing.assert_array_equal(unranked.reranked(docs, index.n_docs).search(queries, 10, 3)[0],
                                  flat.search(queries, 10, 3)[0])  # the same codes, re-ranked afterwards
    overlap = np.mean([len(np.intersect1d(a, b)) / 10 for a, b in zip(unranked.search(queries, 10, 8)[0], rows)])
    assert 0.3 < overlap < 1.0  # codes alone approximate the scores: the re-ranking is doing the work


@pytest.mark.parametrize("height,branching,per_node", [(2, 4, False), (3, 3, True)])
def test_deeper_trees_route_with_the_router_and_match_ehi_search(tmp_path, height, branching, per_node):
    index, queries = _index(height, branching, per_node=per_node)
    path = ExportedIndex.build(index).write(tmp_path / "deep.faiss")
    loaded = load_export(path)
    assert router_path(path).exists() and not loaded.meta["exact_in_faiss"]
    for beam in (1, branching, branching**height):
        rows, scores, n_scored = index.search(queries, beam, 20)
        l_rows, l_scores, l_n = loaded.search(queries, 20, beam)
        np.testing.assert_array_equal(l_rows, rows)
        np.testing.assert_array_equal(l_n, n_scored)
        np.testing.assert_allclose(l_scores, scores, rtol=1e-6, atol=1e-6)


@pytest.fixture()
def export_file(tmp_path):
    index, _ = _index(2, 3, n_docs=100)
    return ExportedIndex.build(index).write(tmp_path / "x.faiss")


def _edit_meta(path, **changes):
    meta = json.loads(meta_path(path).read_text())
    for key, value in changes.items():
        if value is None:
            meta.pop(key)
        else:
            meta[key] = value
    meta_path(path).write_text(json.dumps(meta))


@pytest.mark.parametrize("damage,named", [
    (lambda p: _edit_meta(p, doc_ids=None), ".json"),
    (lambda p: _edit_meta(p, faiss_dim=DIM + 5), "x.faiss"),
    (lambda p: _edit_meta(p, format_version=2), "export the index again"),
    (lambda p: _edit_meta(p, doc_ids=["a", "b"]), "x.faiss"),
    (lambda p: meta_path(p).unlink(), ".json"),
    (lambda p: meta_path(p).write_text("{not json"), ".json"),
    (lambda p: p.write_bytes(b"garbage"), "x.faiss"),
    (lambda p: router_path(p).unlink(), "router.safetensors"),
])
def test_a_malformed_or_mismatched_export_is_refused_naming_the_file(export_file, damage, named):
    damage(export_file)
    with pytest.raises(ExportError, match=named.replace(".", r"\.")):
        load_export(export_file)


def test_router_of_another_tree_is_refused(tmp_path, export_file):
    other, _ = _index(2, 4, n_docs=100)
    ExportedIndex.build(other).write(tmp_path / "other.faiss")
    router_path(tmp_path / "other.faiss").replace(router_path(export_file))
    with pytest.raises(ExportError, match=r"x\.faiss\.router\.safetensors.*16 leaves"):
        load_export(export_file)


def test_queries_of_another_dimension_are_refused(export_file):
    with pytest.raises(ExportError, match="8 dimensions.*expects 16"):
        load_export(export_file).search(np.zeros((2, 8), dtype=np.float32), 5, 1)


def test_runs_record_the_ivf_behind_the_query_transform(tmp_path):
    index, _ = _index(1, 8, n_docs=300)
    assert ExportedIndex.build(index).faiss_index() == "IVF8,Flat"
    written = faiss.read_index(str(ExportedIndex.build(index).write(tmp_path / "f.faiss")))
    assert isinstance(written, faiss.IndexPreTransform) and written.d == DIM
