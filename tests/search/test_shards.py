"""Sharded corpus encoding (float16 shards + manifest), its resumption, and indexes built from it."""

import json

import numpy as np
import pytest

from ehi.search.registry import build_searcher
from ehi.data.dataset import doc_texts
from ehi.model.encoder import load_encoder
from ehi.search.shards import EmbeddingShards, build_searcher_from_shards, encode_shards

SHARD = 64  # the 200-document test corpus -> 4 shards, the last one short (8 rows)


@pytest.fixture(scope="module")
def texts(tiny_dataset):
    return doc_texts(tiny_dataset.corpus)


@pytest.fixture(scope="module")
def enc():
    return load_encoder("tiny-random", max_length=32, device="cpu", seed=0)


@pytest.fixture(scope="module")
def full(texts, enc, tmp_path_factory):
    out = tmp_path_factory.mktemp("shards") / "full"
    encode_shards(texts, enc, out, shard_size=SHARD, batch_size=16)
    return EmbeddingShards(out)


class CountingEncoder:
    """The encoder, counting the texts it is asked to embed."""

    def __init__(self, enc):
        self.enc, self.n_encoded = enc, 0
        self.name, self.max_length, self.dim = enc.name, enc.max_length, enc.dim

    def encode(self, texts, *args, **kwargs):
        self.n_encoded += len(texts)
        return self.enc.encode(texts, *args, **kwargs)

    def state_dict(self):
        return self.enc.state_dict()


def test_shards_match_the_unsharded_encoder_within_float16_precision(full, texts, enc):
    assert len(full) == 4 and [e["rows"] for e in full.entries] == [64, 64, 64, 8]
    assert full.shard(0).dtype == np.float16 and isinstance(full.shard(0), np.memmap)
    whole = enc.encode(texts, 16)  # (200, d) float32, one pass over the whole corpus
    sharded = full.to_array()
    assert sharded.shape == whole.shape
    np.testing.assert_allclose(sharded, whole, atol=2e-3, rtol=0)  # float16 keeps ~3 digits
    rows = np.array([199, 0, 65, 64, 130])
    np.testing.assert_array_equal(full.take(rows), sharded[rows])
    full.verify()
    manifest = json.loads((full.path / "manifest.json").read_text())
    assert {"encoder", "weights_sha256", "max_length", "dim", "dtype", "shard_size", "n_rows"} <= set(manifest)
    assert manifest["encoder"] == "tiny-random" and manifest["n_rows"] == 200


def test_a_killed_encoding_resumes_at_the_first_unfinished_shard(full, texts, enc, tmp_path):
    out = tmp_path / "resumed"
    counting = CountingEncoder(enc)
    assert encode_shards(texts, counting, out, shard_size=SHARD, batch_size=16, stop_after=2) is None
    assert counting.n_encoded == 128 and not (out / "manifest.json").exists()
    # the kill happened while shard 2 was being written: a temporary file and no entry for it
    (out / ".shard-00002.npy.abc.tmp").write_bytes(b"half a shard")
    # and shard 1's array was damaged after its entry was written
    (out / "shard-00001.npy").write_bytes(b"not an array")
    counting.n_encoded = 0
    assert encode_shards(texts, counting, out, shard_size=SHARD, batch_size=16) == out / "manifest.json"
    assert counting.n_encoded == 64 + 64 + 8  # shards 1 (damaged), 2 and 3; shard 0 was kept
    assert not list(out.glob(".*.tmp"))
    resumed = EmbeddingShards(out)
    resumed.verify()
    np.testing.assert_array_equal(resumed.to_array(), full.to_array())
    counting.n_encoded = 0
    encode_shards(texts, counting, out, shard_size=SHARD, batch_size=16)
    assert counting.n_encoded == 0  # a finished directory costs nothing


def test_shards_of_another_encoder_are_refused(full, texts):
    other = load_encoder("tiny-random", max_length=32, device="cpu", seed=1)
    with pytest.raises(ValueError, match="weights_sha256"):
        encode_shards(texts, other, full.path, shard_size=SHARD)


def test_an_unfinished_directory_cannot_be_read(texts, enc, tmp_path):
    encode_shards(texts, enc, tmp_path, shard_size=SHARD, stop_after=1)
    with pytest.raises(FileNotFoundError, match="unfinished"):
        EmbeddingShards(tmp_path)


@pytest.mark.parametrize("kind, params", [("exact", {}), ("faiss-ivf", {"nlist": 8})])
def test_faiss_index_from_shards_equals_the_index_from_the_full_array(full, kind, params):
    emb = full.to_array()
    queries = emb[::7] + 0.01
    a = build_searcher_from_shards(kind, full, **params)
    b = build_searcher(kind, emb, **params)
    assert a.params == b.params and a.n_docs == b.n_docs == 200
    for budget in a.default_sweep()[:: max(1, len(a.default_sweep()) // 4)]:
        rows_a, scores_a, scored_a = a.search(queries, 10, budget)
        rows_b, scores_b, scored_b = b.search(queries, 10, budget)
        np.testing.assert_array_equal(rows_a, rows_b)
        np.testing.assert_array_equal(scored_a, scored_b)
        np.testing.assert_allclose(scores_a, scores_b, rtol=1e-6)


def test_hnsw_from_shards_finds_what_the_full_array_build_finds(full):
    # HNSW's graph depends on the insertion batches (faiss orders each batch by level), so the two
    # graphs differ; at a wide beam both must return the exact neighbours
    emb = full.to_array()
    truth = build_searcher("exact", emb).search(emb[::7], 10, 1)[0]
    for s in (build_searcher_from_shards("faiss-hnsw", full, M=8), build_searcher("faiss-hnsw", emb, M=8)):
        rows = s.search(emb[::7], 10, 200)[0]
        assert np.mean([len(set(r) & set(t)) / 10 for r, t in zip(rows, truth)]) >= 0.97


def test_ivf_trained_on_a_sample_still_finds_the_exact_neighbours_at_full_probe(full):
    emb = full.to_array()
    ivf = build_searcher_from_shards("faiss-ivf", full, nlist=8, train_size=100)
    exact = build_searcher("exact", emb)
    rows, _, scored = ivf.search(emb[:20], 5, 8)
    assert (scored == 200).all()
    np.testing.assert_array_equal(rows, exact.search(emb[:20], 5, 1)[0])


def test_scann_from_shards_is_built_on_the_full_array(full):
    s = build_searcher_from_shards("scann", full, num_leaves=4)
    rows, _, scored = s.search(full.to_array()[:5], 3, 4)
    assert (scored == 200).all() and (rows[:, 0] == np.arange(5)).all()


def test_command_line_encodes_a_dataset_and_builds_an_index_from_its_shards(tiny_dataset, full, tmp_path):
    from ehi.search.registry import load_searcher
    from ehi.search.shards import main

    tiny_dataset.write(tmp_path / "data")
    main(["encode", "--encoder", "tiny-random", "--data-dir", str(tmp_path / "data"), "--out",
          str(tmp_path / "shards"), "--shard-size", str(SHARD), "--max-length", "32", "--device", "cpu"])
    np.testing.assert_array_equal(EmbeddingShards(tmp_path / "shards").to_array(), full.to_array())
    main(["build", "--shards", str(tmp_path / "shards"), "--kind", "faiss-ivf", "--out", str(tmp_path / "ivf"),
          "--param", "nlist=8"])
    index = load_searcher(tmp_path / "ivf")
    assert index.n_docs == 200 and index.params["nlist"] == 8
