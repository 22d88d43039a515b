"""The L_siamese registry: a new loss is one module plus one line here (or one
:func:`register_siamese_loss` call in a plugin module, :mod:`ehi.core.plugins`).

name -> fn(pos (n,), neg (n, m), mask (n, m), *, margin, temperature) -> scalar. Beyond the paper:
the DEXML losses (Gupta et al., ICLR 2024) as alternatives for L_siamese. The config schema's
``train.siamese_loss`` enum lists the built-in names (tests/test_config_schema.py checks it).
"""

from __future__ import annotations

from typing import Callable

from ehi.core.plugins import load_plugins
from ehi.train.losses.dexml import SIAMESE_OPTIONS
from ehi.train.losses.pairwise import infonce_loss, triplet_loss

SIAMESE_LOSSES = {"triplet": triplet_loss, "infonce": infonce_loss, "softmax": infonce_loss, **SIAMESE_OPTIONS}
# "softmax" is the multi-label softmax the DEXML paper starts from: InfoNCE whose denominator also
# holds the query's *other* positives in the batch (ehi_loss adds them to the mask), so a query's
# positives compete with each other. "infonce" and "decoupled_softmax" mask them out: each
# positive competes with negatives only, which is Decoupled Softmax's definition.
SHARED_DENOMINATOR = {"softmax"}
BUILTIN_SIAMESE_LOSSES = tuple(SIAMESE_LOSSES)


def register_siamese_loss(name: str, fn: Callable, shared_denominator: bool = False) -> None:
    """Add an L_siamese form; ``shared_denominator``: a query's other positives stay in its
    denominator (as in ``softmax``) instead of being masked out."""
    if name in SIAMESE_LOSSES:
        raise ValueError(f"L_siamese {name!r} is already registered")
    SIAMESE_LOSSES[name] = fn
    if shared_denominator:
        SHARED_DENOMINATOR.add(name)


def siamese_losses() -> tuple[str, ...]:
    """Every L_siamese name, plugins' included."""
    load_plugins()
    return tuple(SIAMESE_LOSSES)
