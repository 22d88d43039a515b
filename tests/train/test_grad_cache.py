"""GradCache (train.grad_cache_chunk): the whole batch's gradient, one micro-batch's activations."""

import numpy as np
import torch

from ehi.model.encoder import load_encoder
from ehi.model.tree import TreeIndexer
from ehi.train.batches import TrainData, refresh_cache
from ehi.train.config import TrainConfig
from ehi.train.grad_cache import encode_in_chunks
from ehi.train.loop import train
from ehi.train.step import train_step


def _encoder():
    return load_encoder("tiny-random", max_length=16, device="cpu", seed=0)


def _in_batch_loss(q, d):
    """Softmax over every document of the batch: in-batch negatives span all rows."""
    return torch.nn.functional.cross_entropy(q @ d.T / 0.05, torch.arange(len(q)))


def _grads(encoder, texts, chunk):
    encoder.model.zero_grad(set_to_none=True)
    rows = np.arange(len(texts))
    q = encode_in_chunks(encoder, texts, None, rows[: len(rows) // 2], chunk)
    d = encode_in_chunks(encoder, texts, None, rows[len(rows) // 2 :], chunk)
    loss = _in_batch_loss(q, d)
    loss.backward()
    return float(loss.detach()), {n: p.grad.clone() for n, p in encoder.model.named_parameters() if p.grad is not None}


def test_chunked_gradient_equals_the_whole_batch_gradient(tiny_dataset):
    encoder = _encoder().eval()  # no dropout: the two forwards draw nothing, so they must agree
    texts = list(tiny_dataset.corpus.text[:24])
    loss, whole = _grads(encoder, texts, 0)
    for chunk in (1, 5):
        loss_c, chunked = _grads(encoder, texts, chunk)
        assert abs(loss_c - loss) < 1e-5
        assert chunked.keys() == whole.keys() and len(whole) > 0
        for name in whole:
            torch.testing.assert_close(chunked[name], whole[name], atol=1e-5, rtol=1e-4)


def test_dropout_is_replayed_in_the_recomputed_forward(tiny_dataset):
    """In train mode the backward's re-forward must draw the forward's dropout (else its gradient
    belongs to other embeddings than the loss saw): chunked == per-chunk by hand with the same seed."""
    texts = list(tiny_dataset.corpus.text[:12])
    encoder = _encoder().train()
    torch.manual_seed(3)
    q = encode_in_chunks(encoder, texts, None, np.arange(12), 4)
    torch.manual_seed(3)
    by_hand = torch.cat([encoder([texts[i] for i in range(s, s + 4)]) for s in range(0, 12, 4)])
    torch.testing.assert_close(q.detach(), by_hand.detach())
    encoder.model.zero_grad(set_to_none=True)
    q.sum().backward()  # the recompute replays the saved RNG state (a different draw would still run,
    chunked = {n: p.grad.clone() for n, p in encoder.model.named_parameters() if p.grad is not None}
    encoder.model.zero_grad(set_to_none=True)
    by_hand.sum().backward()  # so compare with the by-hand forward's graph of the same draw)
    for n, p in encoder.model.named_parameters():
        if p.grad is not None:
            torch.testing.assert_close(chunked[n], p.grad, atol=1e-5, rtol=1e-4)


def test_activations_kept_for_the_backward_shrink_to_one_micro_batch(tiny_dataset):
    texts = list(tiny_dataset.corpus.text[:32])
    encoder = _encoder().train()

    def saved_bytes(chunk):
        total = [0]

        def pack(t):
            total[0] += t.numel() * t.element_size()
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            encode_in_chunks(encoder, texts, None, np.arange(32), chunk).sum()
        return total[0]

    assert saved_bytes(4) < 0.1 * saved_bytes(0)  # the chunks' inner activations are not kept


def test_a_training_run_with_grad_cache_learns_like_the_plain_one(tiny_dataset, tmp_path):
    cfg = dict(epochs=1, batch_size=8, height=2, branching=2, max_length=16, lr_encoder=1e-3, lr_indexer=1e-2,
               device="cpu", encode_batch_size=32)
    data = TrainData.from_dataset(tiny_dataset)
    batch = np.arange(8)
    losses = {}
    for chunk in (0, 3):
        torch.manual_seed(0)
        enc = _encoder().eval()
        tree = TreeIndexer(enc.dim, 2, 2)
        step_cfg = TrainConfig(**cfg, grad_cache_chunk=chunk)
        cache = refresh_cache(data, enc, tree, step_cfg)  # the mined (leaf) negatives read it
        terms, _ = train_step(batch, data, cache, np.random.default_rng(0), enc, tree, step_cfg, torch.device("cpu"))
        terms["loss"].backward()
        losses[chunk] = (float(terms["loss"]), [p.grad.clone() for p in enc.model.parameters() if p.grad is not None],
                         [p.grad.clone() for p in tree.parameters() if p.grad is not None])
    assert abs(losses[0][0] - losses[3][0]) < 1e-5
    for a, b in zip(losses[0][1] + losses[0][2], losses[3][1] + losses[3][2]):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)
    summary = train(tiny_dataset, _encoder(), TrainConfig(**cfg, grad_cache_chunk=3), tmp_path, progress=False)
    assert summary["finished"] and np.isfinite(summary["last"]["loss"]) and (tmp_path / "encoder").exists()
