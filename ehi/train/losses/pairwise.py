"""Pairwise losses: every one takes ``pos`` (n,), ``neg`` (n, m) and ``mask`` (n, m).

``pos`` is the similarity of each query to its positive, ``neg`` its similarity to every candidate
negative, ``mask`` True where the candidate is a valid negative (not relevant to that query). In a
batch the m candidates are all documents of the batch: the queries' own hard negatives plus
everyone else's positives and negatives (in-batch negatives). The shared signature is what lets
:mod:`ehi.train.losses.registry` swap them as L_siamese.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

def _masked_mean(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    # A batch with no valid pair gives 0 (not NaN): nothing to learn from it.
    mask = mask.to(values.dtype)
    return (values * mask).sum() / mask.sum().clamp(min=1.0)


def triplet_loss(pos, neg, mask, *, margin: float = 0.1, temperature: float | None = None):
    """Max-margin loss mean(relu(margin - pos + neg)) over valid (query, negative) pairs."""
    return _masked_mean(F.relu(margin - pos[:, None] + neg), mask)


def infonce_loss(pos, neg, mask, *, margin: float | None = None, temperature: float = 0.05):
    """InfoNCE: -log softmax of the positive against the valid negatives, at ``temperature``."""
    neg = neg.masked_fill(~mask, float("-inf"))
    logits = torch.cat([pos[:, None], neg], dim=1) / temperature  # (n, 1 + m)
    return -torch.log_softmax(logits, dim=1)[:, 0].mean()
