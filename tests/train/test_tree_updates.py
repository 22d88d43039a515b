"""The convergence options of the training loop: tree-only updates, corpus negatives,
dev selection, frozen layers, k-means warm start; each against what it promises."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from ehi.model.encoder import load_encoder
from ehi.model.layer_cache import build_layer_cache, encode_all
from ehi.model.tree import TreeIndexer
from ehi.model.tree_init import kmeans_init_, spherical_kmeans
from ehi.train.batches import TrainData, refresh_cache
from ehi.train.config import TrainConfig
from ehi.train.loop import train
from ehi.train.tree_fit import corpus_negatives
from ehi.train.tree_updates import TreeUpdates

ALL_ON = dict(indexer_steps=2, indexer_steps_lr=1e-2, indexing_negatives=2, dev_eval=True, select="dev",
              freeze_layers=1, layer_cache_dtype="float32", indexer_init="kmeans")


def encoder():
    return load_encoder("tiny-random", max_length=16, device="cpu", seed=0)


def config(**kw) -> TrainConfig:
    base = dict(epochs=3, batch_size=8, height=2, branching=2, max_length=16, lr_encoder=1e-3,
                lr_indexer=1e-2, device="cpu", encode_batch_size=32)
    return TrainConfig(**{**base, **kw})


def weights(folder) -> dict:
    out = {}
    for f in sorted(folder.glob("*.safetensors")):
        out.update({f"{f.name}:{k}": v for k, v in load_file(str(f)).items()})
    return out


def tree(folder) -> dict:
    return load_file(str(folder / "indexer.safetensors"))


def same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_tree_updates_change_the_tree_and_nothing_else(tiny_dataset):
    cfg = config(indexer_steps=3, indexing_negatives=2)
    enc = encoder()
    data = TrainData.from_dataset(tiny_dataset)
    tree = TreeIndexer(enc.dim, cfg.height, cfg.branching)
    cache = refresh_cache(data, enc, tree, cfg)
    tree.standardize_(cache.doc_emb)
    before_enc = {k: v.clone() for k, v in enc.state_dict().items()}
    before_tree = {k: v.clone() for k, v in tree.state_dict().items()}
    loss = TreeUpdates(tree, data, cfg, encoder_steps=10).after_step(cache, epoch=0, batch=0)
    assert np.isfinite(loss)
    assert all(torch.equal(before_enc[k], v) for k, v in enc.state_dict().items())
    assert all(p.grad is None for p in enc.parameters())
    assert any(not torch.equal(before_tree[k], v) for k, v in tree.state_dict().items())
    np.testing.assert_array_equal(cache.doc_leaf, tree.assign_leaves(cache.doc_emb))


def test_indexer_steps_zero_is_the_plain_loop(tiny_dataset, tmp_path):
    train(tiny_dataset, encoder(), config(), tmp_path / "plain", progress=False)
    train(tiny_dataset, encoder(), config(indexer_steps=0, indexing_negatives=0, dev_eval=False),
          tmp_path / "zero", progress=False)
    assert same(tree(tmp_path / "plain"), tree(tmp_path / "zero"))
    assert same(weights(tmp_path / "plain" / "encoder"), weights(tmp_path / "zero" / "encoder"))


def test_corpus_negatives_never_include_a_judged_document():
    rng = np.random.default_rng(0)
    relevant = [np.arange(0, 40), np.array([3]), np.arange(45, 50)]  # query 0 judges 40 of 50 documents
    q_rows = np.array([0, 1, 2, 0] * 50)
    negs = corpus_negatives(q_rows, 50, 5, relevant, rng)
    assert negs.shape == (200, 5)
    for q, row in zip(q_rows, negs):
        assert not np.isin(row, relevant[q]).any()
    assert set(negs[q_rows == 0].ravel()) == set(range(40, 50))  # uniform over what is left
    with pytest.raises(ValueError, match="every document"):
        corpus_negatives(np.array([0]), 40, 1, relevant, rng)


def test_frozen_layer_cache_equals_the_full_forward_and_gets_no_gradient(tiny_dataset, tmp_path):
    enc = encoder()
    texts = list(tiny_dataset.corpus.text[:40])
    cache = build_layer_cache(enc, texts, 1, tmp_path / "c", dtype="float32")
    np.testing.assert_allclose(encode_all(enc, texts, cache), enc.encode(texts), atol=1e-5)
    frozen = {k: v.clone() for k, v in enc.model.state_dict().items() if k.startswith(("embeddings.", "encoder.layer.0."))}
    out = tmp_path / "run"
    train(tiny_dataset, enc, config(epochs=1, freeze_layers=1, layer_cache_dtype="float32"), out, progress=False)
    saved = weights(out / "encoder")
    for k, v in frozen.items():
        assert torch.equal(saved[f"model.safetensors:{k}"], v), k
    top = [k for k in saved if ".layer.1." in k]
    assert top and any(not torch.equal(saved[k], load_encoder("tiny-random").model.state_dict()[k.split(":", 1)[1]])
                       for k in top)


def test_select_dev_ends_with_the_best_dev_epochs_weights(tiny_dataset, tmp_path):
    cfg = config(epochs=3, dev_eval=True, select="dev", lr_encoder=5e-3)
    summary = train(tiny_dataset, encoder(), cfg, tmp_path / "sel", progress=False)
    log = json.loads((tmp_path / "sel" / "checkpoint" / "state.json").read_text())["log"]
    key = cfg.selection_key
    best = max(log, key=lambda r: (r[key], -r["epoch"]))["epoch"]
    assert summary["selected_epoch"] == best and all(key in r and "dev_ndcg@10" in r for r in log)
    assert [r["epoch"] for r in log] == [0, 1, 2, 3]  # epoch 0: the starting point, judged too
    if best == 0:  # the start won: the final encoder is the pretrained one
        assert same({k: v for k, v in encoder().model.state_dict().items()},
                    {k.split(":", 1)[1]: v for k, v in weights(tmp_path / "sel" / "encoder").items()})
        return
    # the same run stopped right after the best epoch has exactly the final weights
    train(tiny_dataset, encoder(), cfg, tmp_path / "upto", stop_after_epoch=best, progress=False)
    ckpt = tmp_path / "upto" / "checkpoint"
    assert same(weights(tmp_path / "sel" / "encoder"), weights(ckpt / "encoder"))
    assert same(tree(tmp_path / "sel"), tree(ckpt))


def test_patience_stops_after_that_many_epochs_without_gain(tiny_dataset, tmp_path):
    cfg = config(epochs=6, dev_eval=True, select="dev", patience=1, lr_encoder=0.0, lr_indexer=0.0)
    summary = train(tiny_dataset, encoder(), cfg, tmp_path, progress=False)
    # nothing moves at lr 0: the start (epoch 0) is the best, epoch 1 brings no gain, the run stops there
    assert summary["stopped_early"] and summary["epochs_done"] == 1 and summary["selected_epoch"] == 0
    assert (tmp_path / "encoder").exists()


def test_resume_with_every_option_on_is_bit_identical(tiny_dataset, tmp_path):
    cfg = config(**ALL_ON)
    train(tiny_dataset, encoder(), cfg, tmp_path / "full", progress=False)
    train(tiny_dataset, encoder(), cfg, tmp_path / "cut", stop_after_epoch=1, progress=False)
    train(tiny_dataset, encoder(), cfg, tmp_path / "cut", progress=False)  # resumes at epoch 1
    assert same(tree(tmp_path / "full"), tree(tmp_path / "cut"))
    assert same(weights(tmp_path / "full" / "encoder"), weights(tmp_path / "cut" / "encoder"))


def test_kmeans_start_is_spherical_kmeans_at_level_one():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((400, 12)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    tree = kmeans_init_(TreeIndexer(12, 1, 8), x, seed=3)
    np.testing.assert_array_equal(tree.assign_leaves(x), np.argmax(x @ spherical_kmeans(x, 8, 3).T, axis=1))
    deep = kmeans_init_(TreeIndexer(12, 2, 4, per_node=True), x)
    assert (np.bincount(deep.assign_leaves(x), minlength=16) > 0).all()  # hierarchical: no empty leaf


RSS_SCRIPT = textwrap.dedent("""
    import json, resource, sys
    import ehi.train.loop as loop
    from ehi.data.synthetic import SyntheticConfig, generate
    from ehi.model.encoder import load_encoder
    from ehi.train.config import TrainConfig
    peaks, real = {}, loop.train_step
    def step(*args, **kwargs):
        out = real(*args, **kwargs)
        peaks[len(peaks) + 1] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return out
    loop.train_step = step
    data = generate(SyntheticConfig(n_docs=200, n_queries=60, n_topics=2, n_subtopics=4))
    cfg = TrainConfig(epochs=13, batch_size=8, height=2, branching=4, max_length=32, device="cpu",
                      indexer_steps=2, indexing_negatives=2, dev_eval=True)
    loop.train(data, load_encoder("tiny-random", max_length=32, device="cpu"), cfg, sys.argv[1], progress=False)
    print(json.dumps(peaks))
""")


@pytest.mark.slow  # a training in a fresh interpreter
def test_peak_rss_does_not_grow_with_steps(tmp_path):
    proc = subprocess.run([sys.executable, "-c", RSS_SCRIPT, str(tmp_path)], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    peaks = {int(k): v for k, v in json.loads(proc.stdout.strip().splitlines()[-1]).items()}
    assert len(peaks) >= 50
    assert peaks[50] <= 1.10 * peaks[5], (peaks[5], peaks[50])
