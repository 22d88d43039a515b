"""One training step: mine negatives, encode the batch, compute EHI's loss terms.

Each batch adds ``n_hard_negatives`` mined negatives per pair and uses every other document of the
batch as an in-batch negative; the step refreshes the cache lazily with the batch's fresh
embeddings and leaves.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np
import torch

from ehi.train import distributed
from ehi.train.grad_cache import encode_in_chunks
from ehi.train.losses.objective import ehi_loss
from ehi.train.negatives import mine_negatives, negative_mask, relevance_mask
from ehi.train.neighbours import neighbour_pair_loss, neighbour_pairs, neighbour_term
from ehi.train.tree_updates import corpus_negative_trees


def train_step(batch, data, cache, rng, encoder, indexer, cfg, device, towers=None) -> tuple[dict, np.ndarray]:
    """Forward one batch of pair indices; returns the loss terms and the batch's query rows.
    Lazily refreshes the cache with the batch's fresh embeddings (and leaves). ``towers``: the
    DistributedDataParallel module of a multi-process run (None in one process)."""
    q_rows, pos_rows = data.pair_q[batch], data.pair_d[batch]
    negs = mine_negatives(data, cache, q_rows, pos_rows, cfg.n_negatives, rng, cfg)  # (n, k)
    doc_rows = np.concatenate([pos_rows, negs.ravel()])  # (m,) positives first
    relevant = relevance_mask(data, q_rows, doc_rows)  # (n, m)
    mask = negative_mask(data, q_rows, doc_rows, cfg.n_negatives, cfg.in_batch_negatives, relevant).to(device)
    positives = torch.from_numpy(relevant).to(device)
    amp = torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda" else contextlib.nullcontext()
    neighbour = indexer is not None and cfg.lambda_neighbour > 0
    with amp:
        if towers is None:
            # micro-batches recomputed in the backward when grad_cache_chunk is set (GradCache)
            q = encode_in_chunks(encoder, data.query_texts, data.query_layers, q_rows, cfg.grad_cache_chunk)  # (n, d)
            d = encode_in_chunks(encoder, data.doc_texts, data.doc_layers, doc_rows, cfg.grad_cache_chunk)  # (m, d)
            q_tree = indexer(q) if indexer is not None else None
            d_tree = indexer(d) if indexer is not None else None
        else:
            pairs = neighbour_pairs(cache, rng, cfg, device) if neighbour else None
            q, d, q_tree, d_tree, pair_tree = _sharded_forward(towers, data, q_rows, doc_rows, pairs, cfg)
        pos_idx = torch.arange(len(q_rows), device=device)
        corpus = {}
        if q_tree is not None and cfg.indexing_negatives and cfg.lambda_indexing:
            corpus = dict(zip(("corpus_tree", "corpus_mask"), corpus_negative_trees(
                indexer, data, cache, q_rows, cfg.indexing_negatives, rng, device)))
        terms = ehi_loss(q, d, pos_idx, mask, q_tree, d_tree, positive_mask=positives, **corpus,
                         **cfg.loss_kwargs())
    if neighbour:
        terms["neighbour"] = (neighbour_term(cache, indexer, rng, cfg, device) if towers is None
                              else neighbour_pair_loss(pair_tree, cfg))
        terms["loss"] = terms["loss"] + cfg.lambda_neighbour * terms["neighbour"]
    if cache is not None:
        cache.q_emb[q_rows] = q.detach().float().cpu().numpy()
        cache.doc_emb[doc_rows] = d.detach().float().cpu().numpy()
        if d_tree is not None:
            cache.doc_leaf[doc_rows] = d_tree.leaf.cpu().numpy()
    return terms, q_rows


def _sharded_forward(towers, data, q_rows, doc_rows, pairs, cfg):
    """The multi-process forward: this rank encodes its contiguous share of the batch's queries and
    documents; the shares are gathered with gradient into the global (n, d) and (m, d) batch, and
    the trees likewise (see ehi.train.distributed for why that gives the single-process gradient)."""
    ctx = distributed.context()
    (qa, qb), (da, db) = distributed.shard_bounds(len(q_rows), ctx), distributed.shard_bounds(len(doc_rows), ctx)
    # an empty share encodes a stand-in text and keeps none of it (every rank must run DDP's forward)
    q_texts = [data.query_texts[i] for i in q_rows[qa:qb]] or [data.query_texts[q_rows[0]]]
    d_texts = [data.doc_texts[i] for i in doc_rows[da:db]] or [data.doc_texts[doc_rows[0]]]
    tree_grad = cfg.use_tree and cfg.lambda_indexing > 0  # else the trees only give leaves
    q, d, q_tree, d_tree, pair_tree = towers(q_texts, d_texts, qb - qa, db - da, tree_grad, pairs)
    q, d = distributed.gather_rows(q, len(q_rows), ctx), distributed.gather_rows(d, len(doc_rows), ctx)
    if q_tree is not None:
        q_tree = distributed.gather_tree(q_tree, len(q_rows), ctx)
        d_tree = distributed.gather_tree(d_tree, len(doc_rows), ctx)
    return q, d, q_tree, d_tree, pair_tree


def check_finite(terms: dict, step: int, epoch: int, batch: int, query_ids: list[str]) -> None:
    """Stop before a NaN/inf reaches the weights; numbers are 1-based like the training log."""
    values = {k: float(v.detach()) for k, v in terms.items()}
    if not all(math.isfinite(v) for v in values.values()):
        shown = ", ".join(f"{k}={v:.6g}" for k, v in values.items())
        raise RuntimeError(f"non-finite loss at step {step + 1} (epoch {epoch + 1}, batch {batch + 1}): "
                           f"{shown}; batch query ids "
                           f"{query_ids}. Training stopped; the last good checkpoint is kept.")
