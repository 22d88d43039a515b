"""The L_siamese registry: a new loss is one module plus one line in
:mod:`ehi.train.losses.names` (or one :func:`register_siamese_loss` call in a plugin module,
:mod:`ehi.core.plugins`).

name -> fn(pos (n,), neg (n, m), mask (n, m), *, margin, temperature) -> scalar. Beyond the paper:
the DEXML losses (Gupta et al., ICLR 2024) as alternatives for L_siamese. The functions are built
from the light name table, which is what the config checks read (no torch at parse time).
"""

from __future__ import annotations

from typing import Callable

from ehi.core.plugins import resolve
from ehi.train.losses import names

SIAMESE_LOSSES: dict[str, Callable] = {name: resolve(target) for name, target in names.loss_targets().items()}
# "infonce" and "decoupled_softmax" mask a query's other positives out: each positive competes
# with negatives only, which is Decoupled Softmax's definition. "softmax" keeps them in its
# denominator (ehi_loss adds them to the mask), so a query's positives compete with each other.
SHARED_DENOMINATOR = {"softmax"}


def register_siamese_loss(name: str, fn: Callable, shared_denominator: bool = False) -> None:
    """Add an L_siamese form; ``shared_denominator``: a query's other positives stay in its
    denominator (as in ``softmax``) instead of being masked out. The name is recorded in the
    light table too, so the config checks accept it."""
    names.add_loss_name(name, f"{fn.__module__}:{fn.__qualname__}")
    SIAMESE_LOSSES[name] = fn
    if shared_denominator:
        SHARED_DENOMINATOR.add(name)
