"""A toy L_siamese loss and a toy dataset source, registered through the registries alone
(tests/test_config_registries.py): the config checks accept both with the shipped schema.

* loss ``toy-hinge``: the squared triplet hinge, a deliberately plain variant of ``triplet``.
* source ``toy-beir``: a local BEIR directory read by the BEIR parser, nothing to download.

Put this folder on PYTHONPATH and name the module in EHI_PLUGINS (ehi/core/plugins.py).
"""

from __future__ import annotations

import torch

from ehi.data.sources import BEIR_LAYOUT, BEIR_PARSER, Source, register_source
from ehi.train.losses.registry import register_siamese_loss


def squared_hinge_loss(pos, neg, mask, *, margin: float = 0.1, temperature: float | None = None):
    """mean over valid (pair, negative) of max(0, margin - pos + neg)^2."""
    hinge = torch.relu(margin - pos[:, None] + neg) ** 2  # (n, m)
    return (hinge * mask).sum() / mask.sum().clamp(min=1)


register_siamese_loss("toy-hinge", squared_hinge_loss)
register_source(Source("toy-beir", BEIR_PARSER, BEIR_LAYOUT, "corpus.jsonl", note="the toy source downloads nothing;"))
