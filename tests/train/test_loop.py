"""The training loop on a tiny generated set with the tiny random encoder (CPU, seconds)."""

import json

import numpy as np
import pandas as pd
import pytest
import torch
from safetensors.torch import load_file

from ehi.data.dataset import Dataset
from ehi.model.encoder import load_encoder
from ehi.model.tree import TreeIndexer, load_indexer
from ehi.train.losses.objective import indexing_loss
from ehi.train.losses.pairwise import triplet_loss
from ehi.train.batches import EmbeddingCache, TrainData
from ehi.train.config import TrainConfig
from ehi.train.loop import train
from ehi.train.negatives import mine_negatives, negative_mask
from ehi.train.neighbours import nearest_documents

TOPICS = ["apple banana cherry fruit juice", "engine wheel brake car road", "river lake water rain boat",
          "guitar drum song music band"]


def tiny_dataset() -> Dataset:
    """4 topics x 8 documents, 16 training queries, one of them with two relevant documents."""
    rng = np.random.default_rng(0)
    docs, queries, qrels = [], [], []
    for t, words in enumerate(TOPICS):
        w = words.split()
        docs += [(f"d{t}{j}", f"t{j}", " ".join(rng.choice(w, 4))) for j in range(8)]
        queries += [(f"q{t}{j}", " ".join(rng.choice(w, 2)), "train") for j in range(4)]
        qrels += [(f"q{t}{j}", f"d{t}{j}", 1, "train") for j in range(4)]
    qrels.append(("q00", "d07", 1, "train"))
    return Dataset("tiny", pd.DataFrame(docs, columns=["doc_id", "title", "text"]),
                   pd.DataFrame(queries, columns=["query_id", "text", "split"]),
                   pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance", "split"]))


@pytest.fixture(scope="module")
def data():
    return tiny_dataset()


def encoder():
    return load_encoder("tiny-random", max_length=16, device="cpu", seed=0)


def config(**kw) -> TrainConfig:
    base = dict(epochs=2, batch_size=4, height=2, branching=2, max_length=16, lr_encoder=1e-3,
                lr_indexer=1e-2, device="cpu", encode_batch_size=16)
    return TrainConfig(**{**base, **kw})


def test_config_rejects_unknown_keys_and_bad_values():
    with pytest.raises(ValueError, match="lambda_indexingg"):
        TrainConfig.from_dict({"epochs": 1, "lambda_indexingg": 1.0})
    with pytest.raises(ValueError, match="siamese_loss"):
        TrainConfig.from_dict({"siamese_loss": "hinge"})
    assert TrainConfig.from_dict(TrainConfig().to_dict()) == TrainConfig()


def test_train_data_and_negative_mask(data):
    d = TrainData.from_dataset(data)
    assert len(d.pair_q) == 17 and len(d.doc_texts) == 32
    q00 = d.query_ids.index("q00")
    np.testing.assert_array_equal(d.relevant[q00], [0, 7])
    mask = negative_mask(d, np.array([q00]), np.array([0, 7, 3]), k=1, in_batch=True).numpy()
    assert mask.tolist() == [[False, False, True]]


def test_hard_negatives_share_the_positives_leaf_or_the_queries_top_k(data):
    d = TrainData.from_dataset(data)
    rng = np.random.default_rng(0)
    leaf = np.arange(32) // 4  # 8 leaves of 4 consecutive documents
    cache = EmbeddingCache(doc_emb=np.eye(32, dtype=np.float32), q_emb=np.zeros((16, 32), np.float32), doc_leaf=leaf)
    q_rows, pos_rows = d.pair_q, d.pair_d
    negs = mine_negatives(d, cache, q_rows, pos_rows, 2, rng, config())
    assert np.all(leaf[negs] == leaf[pos_rows][:, None])
    assert not any(np.isin(n, d.relevant[q]).any() for q, n in zip(q_rows, negs))
    cache.q_emb[:, 20:23] = 1.0  # DE: every query's exact top-3 is documents 20, 21, 22
    negs = mine_negatives(d, cache, q_rows, pos_rows, 2, rng, config(use_tree=False, hard_negative_pool=3))
    assert np.isin(negs, [20, 21, 22]).all() and (negs[:, 0] != negs[:, 1]).all()


def test_indexing_loss_gradients_reach_the_encoder(data):
    enc = encoder().train()
    tree = TreeIndexer(enc.dim, height=2, branching=2)
    q = enc(data.queries.text[:4].tolist())
    d = enc(data.corpus.text[:8].tolist())
    mask = torch.ones(4, 8, dtype=torch.bool).fill_diagonal_(False)
    loss = indexing_loss(tree(q), tree(d), torch.arange(4), mask, margin=2.0)
    loss.backward()
    grads = [p.grad for p in enc.parameters() if p.grad is not None]
    assert grads and sum(float(g.abs().sum()) for g in grads) > 0


def _fixed_triplet_loss(enc, data) -> float:
    """Encoder triplet loss on fixed (query, positive, every other document) triplets."""
    d = TrainData.from_dataset(data)
    q = torch.from_numpy(enc.encode(d.query_texts))
    docs = torch.from_numpy(enc.encode(d.doc_texts))
    sim = q[d.pair_q] @ docs.T  # (P, N)
    mask = torch.from_numpy(np.stack([~np.isin(np.arange(len(docs)), d.relevant[i]) for i in d.pair_q]))
    pos = sim.gather(1, torch.from_numpy(d.pair_d)[:, None])[:, 0]
    return float(triplet_loss(pos, sim, mask, margin=0.2))


def test_an_epoch_lowers_the_loss(data, tmp_path):
    enc = encoder()
    before = _fixed_triplet_loss(enc, data)
    train(data, enc, config(epochs=1, warmup_ratio=0.0, margin=0.2, lr_encoder=3e-3), tmp_path, progress=False)
    assert _fixed_triplet_loss(enc, data) < 0.9 * before


def _weights(out_dir):
    # the saved tensors themselves (loading the folder would add BERT's unused, random pooler)
    enc = load_file(str(out_dir / "encoder" / "model.safetensors"))
    return {**enc, **{f"tree.{k}": v for k, v in load_indexer(out_dir).state_dict().items()}}


def test_the_embedding_cache_round_trips_through_its_arrays():
    cache = EmbeddingCache(doc_emb=np.eye(4, dtype=np.float32), q_emb=np.ones((2, 4), np.float32))
    assert set(cache.arrays()) == {"doc_emb", "q_emb"}  # unset fields are not stored
    cache.doc_leaf = np.array([0, 0, 1, 1])
    back = EmbeddingCache.from_arrays(cache.arrays())
    assert all(np.array_equal(getattr(back, k), v) for k, v in cache.arrays().items()) and back.doc_knn is None
    with pytest.raises(ValueError, match="got \\['doc_emb', 'q_emb', 'what'\\]"):
        EmbeddingCache.from_arrays({"doc_emb": cache.doc_emb, "q_emb": cache.q_emb, "what": np.zeros(1)})


def test_resumed_run_ends_with_the_same_weights(data, tmp_path):
    # reindex_every=2: the resumed epoch must reuse the lazily updated cache from the checkpoint
    cfg = config(epochs=2, reindex_every=2)
    full = train(data, encoder(), cfg, tmp_path / "full", progress=False)
    part = train(data, encoder(), cfg, tmp_path / "part", stop_after_epoch=1, progress=False)
    assert not part["finished"] and not (tmp_path / "part" / "encoder").exists()
    # the cache file: one tensor per set field of the EmbeddingCache, under the field's name
    saved_cache = load_file(str(tmp_path / "part" / "checkpoint" / "cache.safetensors"))
    assert set(saved_cache) == {"doc_emb", "q_emb", "doc_leaf"}
    resumed = train(data, encoder(), cfg, tmp_path / "part", progress=False)
    assert resumed["finished"] and resumed["steps"] == full["steps"]
    a, b = _weights(tmp_path / "full"), _weights(tmp_path / "part")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    log_a = pd.read_parquet(tmp_path / "full" / "train_log.parquet").drop(columns="seconds")
    log_b = pd.read_parquet(tmp_path / "part" / "train_log.parquet").drop(columns="seconds")
    pd.testing.assert_frame_equal(log_a, log_b)
    assert {"loss", "siamese", "indexing", "intra_leaf", "lr_encoder", "leaf_gini", "pos_in_beam"} <= set(log_a)
    ckpt = tmp_path / "full" / "checkpoint"
    assert not list(ckpt.rglob("*.pt")) and not list(ckpt.rglob("*.bin"))
    assert json.loads((ckpt / "state.json").read_text())["epoch"] == 2
    with pytest.raises(ValueError, match="margin"):
        train(data, encoder(), config(epochs=2, reindex_every=2, margin=0.3), tmp_path / "full")


def test_non_finite_loss_stops_with_step_and_query_ids(data, tmp_path, monkeypatch):
    cfg = config(epochs=2)
    train(data, encoder(), cfg, tmp_path, stop_after_epoch=1, progress=False)
    import ehi.train.step as training

    real = training.ehi_loss

    def broken(*args, **kwargs):
        terms = real(*args, **kwargs)
        return {**terms, "loss": terms["loss"] * float("nan")}

    monkeypatch.setattr(training, "ehi_loss", broken)
    with pytest.raises(RuntimeError, match=r"step 6 \(epoch 2, batch 1\): loss=nan.*query ids \['q"):
        train(data, encoder(), cfg, tmp_path, progress=False)
    assert json.loads((tmp_path / "checkpoint" / "state.json").read_text())["epoch"] == 1


def test_dual_encoder_baseline_uses_the_same_loop(data, tmp_path):
    out = train(data, encoder(), config(epochs=1, use_tree=False, siamese_loss="infonce"), tmp_path,
                progress=False)
    assert out["finished"] and (tmp_path / "encoder").is_dir() and not (tmp_path / "indexer.json").exists()
    log = pd.read_parquet(tmp_path / "train_log.parquet")
    assert log.indexing.eq(0).all() and log.intra_leaf.eq(0).all() and log.siamese.gt(0).all()


def test_nearest_documents_excludes_self_and_matches_brute_force():
    emb = np.random.default_rng(0).normal(size=(50, 8)).astype(np.float32)
    knn = nearest_documents(emb, 5, chunk=7)
    scores = emb @ emb.T
    np.fill_diagonal(scores, -np.inf)
    np.testing.assert_array_equal(np.sort(knn, 1), np.sort(np.argsort(-scores, 1)[:, :5], 1))


def test_neighbour_term_and_per_node_indexer_train_and_log(data, tmp_path):
    cfg = config(epochs=1, lambda_neighbour=0.5, neighbour_k=3, neighbour_anchors=8, indexer_per_node=True)
    summary = train(data, encoder(), cfg, tmp_path, progress=False)
    assert summary["finished"] and np.isfinite(summary["last"]["neighbour"])
    assert summary["last"]["neighbour"] > 0
    tree = load_indexer(tmp_path)
    assert tree.per_node and tree.node_delta[1].abs().sum() > 0  # the residuals were trained
    with pytest.raises(ValueError, match="neighbour_anchors"):
        TrainConfig(neighbour_anchors=1)


def test_a_checkpoint_of_another_config_is_set_aside_not_resumed(tmp_path):
    import json

    from ehi.train.checkpoint import set_aside_stale_checkpoint
    from ehi.train.config import TrainConfig

    cfg = TrainConfig(epochs=2, height=2, branching=2)
    ckpt = tmp_path / "checkpoint"
    ckpt.mkdir()
    (ckpt / "state.json").write_text(json.dumps({"config": {**cfg.to_dict(), "branching": 4}}))
    assert set_aside_stale_checkpoint(tmp_path, cfg) == tmp_path / "checkpoint.stale-1"
    assert not ckpt.exists() and (tmp_path / "checkpoint.stale-1" / "state.json").exists()
    ckpt.mkdir()
    (ckpt / "state.json").write_text(json.dumps({"config": cfg.to_dict()}))
    assert set_aside_stale_checkpoint(tmp_path, cfg) is None and ckpt.exists()  # same config: resume
