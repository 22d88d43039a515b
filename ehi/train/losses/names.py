"""The L_siamese names, without torch: what the config checks read while the Snakefile parses.

Each name maps to the ``"module:attribute"`` of its loss function;
:mod:`ehi.train.losses.registry` builds the functions from these strings, so this table is the one
list of the built-in losses and importing it costs no torch. A plugin's loss enters through
:func:`ehi.train.losses.registry.register_siamese_loss`, which records its name here too.

Names follow :data:`NAME_PATTERN`, the schema's pattern for ``train.siamese_loss``: the schema
checks the form, :func:`siamese_loss_names` (plugins included) the name.
"""

from __future__ import annotations

import re

from ehi.core.plugins import load_plugins

NAME_PATTERN = r"[a-z0-9][a-z0-9_-]*"

_PAIRWISE, _DEXML = "ehi.train.losses.pairwise", "ehi.train.losses.dexml"
# "softmax" is the multi-label softmax the DEXML paper starts from: InfoNCE whose denominator also
# holds the query's *other* positives (registry.SHARED_DENOMINATOR), hence the same function.
_TARGETS: dict[str, str] = {
    "triplet": f"{_PAIRWISE}:triplet_loss",
    "infonce": f"{_PAIRWISE}:infonce_loss",
    "softmax": f"{_PAIRWISE}:infonce_loss",
    "decoupled_softmax": f"{_DEXML}:pair_decoupled_softmax",
    "soft_topk": f"{_DEXML}:pair_soft_topk",
}
BUILTIN_SIAMESE_LOSSES = tuple(_TARGETS)


def add_loss_name(name: str, target: str) -> None:
    """Record a loss's name (``target``: where its function lives, for messages and tests); a
    name already taken or outside :data:`NAME_PATTERN` is an error."""
    if name in _TARGETS:
        raise ValueError(f"L_siamese {name!r} is already registered")
    if not re.fullmatch(NAME_PATTERN, name):
        raise ValueError(f"L_siamese name {name!r}: use lower-case letters, digits, '-' and '_'")
    _TARGETS[name] = target


def loss_targets() -> dict[str, str]:
    """{name: "module:attribute"} of every loss, plugins' included (built-in first)."""
    load_plugins()
    return dict(_TARGETS)


def siamese_loss_names() -> tuple[str, ...]:
    """Every L_siamese name, plugins' included: what ``train.siamese_loss`` may be."""
    return tuple(loss_targets())
