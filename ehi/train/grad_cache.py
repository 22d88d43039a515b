"""Gradient caching over micro-batches (GradCache, Gao et al. 2021) for batches that do not fit.

A contrastive step's memory is the encoder's activations for every text of the batch. Plain gradient
accumulation would cut that by splitting the batch, and with it the in-batch negatives, which
changes the loss. Here the loss stays the whole batch's: each micro-batch of texts is encoded
under :func:`torch.utils.checkpoint.checkpoint`, which keeps no activations in the forward, so the
batch's embeddings (and the tree's outputs on them) are computed as usual; the backward then re-runs
one micro-batch's forward at a time, with its saved RNG state (the same dropout draw), and
back-propagates that micro-batch's share of the embedding gradient. Peak activation memory is one
micro-batch's; the gradient is the full batch's (to float rounding: the padding of a micro-batch
differs from the batch's). Costs one extra forward per step.

``train.grad_cache_chunk: k`` (texts per micro-batch; 0 = off, the plain forward).
"""

from __future__ import annotations

import torch
from torch.utils.checkpoint import checkpoint

from ehi.model.layer_cache import encode_rows


def encode_in_chunks(encoder, texts, layers, rows, chunk: int) -> torch.Tensor:
    """``encode_rows`` of ``rows`` (n, d), micro-batch by micro-batch of ``chunk`` texts when
    ``0 < chunk < n``, each recomputed in the backward instead of keeping its activations."""
    if chunk <= 0 or len(rows) <= chunk:
        return encode_rows(encoder, texts, layers, rows)
    parts = [checkpoint(encode_rows, encoder, texts, layers, rows[start : start + chunk],
                        use_reentrant=False, preserve_rng_state=True)
             for start in range(0, len(rows), chunk)]
    return torch.cat(parts)
