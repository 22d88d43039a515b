"""train_step has one forward path: one process runs the same Towers forward a multi-process run
wraps in DDP (ehi.train.distributed), with every random draw made before it in one order, so one
process computes what it computed with a forward of its own (checked here against that forward,
written out: encode, tree, corpus negatives, then L_neighbour's pairs)."""

import numpy as np
import torch

from ehi.model.encoder import load_encoder
from ehi.model.tree import TreeIndexer
from ehi.train import distributed
from ehi.train.batches import TrainData, refresh_cache
from ehi.train.config import TrainConfig
from ehi.train.grad_cache import encode_in_chunks
from ehi.train.losses.objective import ehi_loss
from ehi.train.negatives import mine_negatives, negative_mask, relevance_mask
from ehi.train.neighbours import neighbour_term
from ehi.train.step import train_step
from ehi.train.tree_updates import corpus_negative_rows, corpus_negative_trees

CPU = torch.device("cpu")
CFG = TrainConfig(epochs=1, batch_size=8, height=2, branching=2, max_length=16, device="cpu", encode_batch_size=32,
                  indexing_negatives=2, lambda_neighbour=0.5, neighbour_anchors=8, neighbour_k=3, grad_cache_chunk=3)


def _setup(tiny_dataset):
    torch.manual_seed(0)
    enc = load_encoder("tiny-random", max_length=16, device="cpu", seed=0).eval()  # no dropout: forwards agree
    tree = TreeIndexer(enc.dim, CFG.height, CFG.branching)
    data = TrainData.from_dataset(tiny_dataset)
    return enc, tree, data, refresh_cache(data, enc, tree, CFG)


def _reference_step(batch, data, cache, rng, enc, tree, cfg):
    """The single-process forward as it was written before the paths were one."""
    q_rows, pos_rows = data.pair_q[batch], data.pair_d[batch]
    negs = mine_negatives(data, cache, q_rows, pos_rows, cfg.n_negatives, rng, cfg)
    doc_rows = np.concatenate([pos_rows, negs.ravel()])
    relevant = relevance_mask(data, q_rows, doc_rows)
    mask = negative_mask(data, q_rows, doc_rows, cfg.n_negatives, cfg.in_batch_negatives, relevant)
    q = encode_in_chunks(enc, data.query_texts, data.query_layers, q_rows, cfg.grad_cache_chunk)
    d = encode_in_chunks(enc, data.doc_texts, data.doc_layers, doc_rows, cfg.grad_cache_chunk)
    rows = corpus_negative_rows(data, q_rows, cfg.indexing_negatives, rng)
    corpus = dict(zip(("corpus_tree", "corpus_mask"), corpus_negative_trees(tree, data, cache, q_rows, rows, CPU)))
    terms = ehi_loss(q, d, torch.arange(len(q_rows)), mask, tree(q), tree(d), positive_mask=torch.from_numpy(relevant),
                     **corpus, **cfg.loss_kwargs())
    terms["neighbour"] = neighbour_term(cache, tree, rng, cfg, CPU)
    terms["loss"] = terms["loss"] + cfg.lambda_neighbour * terms["neighbour"]
    return terms


def test_one_process_runs_the_towers_forward_once_a_step(tiny_dataset, monkeypatch):
    enc, tree, data, cache = _setup(tiny_dataset)
    calls, forward = [], distributed.Towers.forward
    monkeypatch.setattr(distributed.Towers, "forward", lambda self, *a, **k: calls.append(a[1]) or forward(self, *a, **k))
    terms, q_rows = train_step(np.arange(8), data, cache, np.random.default_rng(0), enc, tree, CFG, CPU)
    assert len(calls) == 1 and list(calls[0]) == list(q_rows)  # the whole batch: one process's share
    assert {"loss", "siamese", "indexing", "intra_leaf", "neighbour"} <= set(terms)


def test_the_one_forward_gives_what_one_process_computed_before(tiny_dataset):
    enc, tree, data, cache = _setup(tiny_dataset)
    expected = _reference_step(np.arange(8), data, cache, np.random.default_rng(0), enc, tree, CFG)
    enc, tree, data, cache = _setup(tiny_dataset)
    terms, _ = train_step(np.arange(8), data, cache, np.random.default_rng(0), enc, tree, CFG, CPU)
    assert set(terms) == set(expected)
    for name in expected:
        torch.testing.assert_close(terms[name], expected[name], rtol=0, atol=0)
