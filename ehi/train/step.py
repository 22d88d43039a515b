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
from ehi.train.losses.objective import ehi_loss
from ehi.train.negatives import mine_negatives, negative_mask, relevance_mask
from ehi.train.neighbours import neighbour_pair_loss, neighbour_pairs
from ehi.train.tree_updates import corpus_negative_rows, corpus_negative_trees


def train_step(batch, data, cache, rng, encoder, indexer, cfg, device, towers=None) -> tuple[dict, np.ndarray]:
    """Forward one batch of pair indices; returns the loss terms and the batch's query rows.
    Lazily refreshes the cache with the batch's fresh embeddings (and leaves). ``towers``: the
    encoder and tree as one module (:class:`~ehi.train.distributed.Towers`, under
    DistributedDataParallel in a multi-process run); None: this process's own, unwrapped.

    One forward for one process and many: every random draw is made first, in one order (hard
    negatives, corpus negatives, L_neighbour's pairs), then this process encodes its share of the
    batch (all of it when alone) and the shares are gathered (ehi.train.distributed)."""
    q_rows, pos_rows = data.pair_q[batch], data.pair_d[batch]
    negs = mine_negatives(data, cache, q_rows, pos_rows, cfg.n_negatives, rng, cfg)  # (n, k)
    doc_rows = np.concatenate([pos_rows, negs.ravel()])  # (m,) positives first
    relevant = relevance_mask(data, q_rows, doc_rows)  # (n, m)
    mask = negative_mask(data, q_rows, doc_rows, cfg.n_negatives, cfg.in_batch_negatives, relevant).to(device)
    positives = torch.from_numpy(relevant).to(device)
    tree = indexer is not None
    corpus_rows = (corpus_negative_rows(data, q_rows, cfg.indexing_negatives, rng)
                   if tree and cfg.indexing_negatives and cfg.lambda_indexing else None)
    pairs = neighbour_pairs(cache, rng, cfg, device) if tree and cfg.lambda_neighbour > 0 else None
    towers = towers if towers is not None else distributed.Towers(encoder, indexer, cfg.grad_cache_chunk)
    amp = torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda" else contextlib.nullcontext()
    with amp:
        q, d, q_tree, d_tree, pair_tree = _forward(towers, data, q_rows, doc_rows, pairs, cfg)
        pos_idx = torch.arange(len(q_rows), device=device)
        corpus = {}
        if q_tree is not None and corpus_rows is not None:
            corpus = dict(zip(("corpus_tree", "corpus_mask"),
                              corpus_negative_trees(indexer, data, cache, q_rows, corpus_rows, device)))
        terms = ehi_loss(q, d, pos_idx, mask, q_tree, d_tree, positive_mask=positives, **corpus,
                         **cfg.loss_kwargs())
    if pairs is not None:
        terms["neighbour"] = neighbour_pair_loss(pair_tree, cfg)
        terms["loss"] = terms["loss"] + cfg.lambda_neighbour * terms["neighbour"]
    if cache is not None:
        cache.q_emb[q_rows] = q.detach().float().cpu().numpy()
        cache.doc_emb[doc_rows] = d.detach().float().cpu().numpy()
        if d_tree is not None:
            cache.doc_leaf[doc_rows] = d_tree.leaf.cpu().numpy()
    return terms, q_rows


def _forward(towers, data, q_rows, doc_rows, pairs, cfg):
    """This process encodes its contiguous share of the batch's queries and documents (the whole
    batch in one process); in a multi-process run the shares are gathered with gradient into the
    global (n, d) and (m, d) batch, and the trees likewise (see ehi.train.distributed for why that
    gives the single-process gradient)."""
    ctx = distributed.context()
    (qa, qb), (da, db) = distributed.shard_bounds(len(q_rows), ctx), distributed.shard_bounds(len(doc_rows), ctx)
    # an empty share encodes a stand-in row and keeps none of it (every rank must run DDP's forward)
    tree_grad = cfg.use_tree and cfg.lambda_indexing > 0  # else the trees only give leaves
    q, d, q_tree, d_tree, pair_tree = towers(data, q_rows[qa:qb] if qb > qa else q_rows[:1],
                                             doc_rows[da:db] if db > da else doc_rows[:1], qb - qa, db - da,
                                             tree_grad, pairs)
    if ctx.active:
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
