"""Which ``train`` keys each model reads: the DE baseline trains no tree, so the tree's keys are
not its settings. The training rules' params carry only these (``workflow/rules/settings.smk``), so
changing ``branching`` or a tree loss retrains EHI and leaves DE and its searches alone.

The tree's keys are the :class:`~ehi.train.config.TrainConfig` fields marked ``tree(...)`` (their
``reads`` metadata), so a new tree setting is classified where it is declared. Light to import: the
Snakefile imports it while it parses.
"""

from __future__ import annotations

from dataclasses import fields

from ehi.train.config import READS, TrainConfig

# DE trains with these keys' defaults, which it never reads
TREE_ONLY = tuple(f.name for f in fields(TrainConfig) if f.metadata.get(READS) == "tree")
# Keys that add a log beside the model and never change its weights: left out at their off value,
# so a config that does not set one keeps its training's settings, and no training reruns for it
LOG_KEYS_OFF = {"diag_every": 0}


def model_settings(train: dict, model: str) -> dict:
    """The ``train`` settings ``model`` ("ehi" or "de") reads, with ``use_tree`` set for it; a log key
    at its off value (:data:`LOG_KEYS_OFF`) is left out."""
    if model not in ("ehi", "de"):
        raise ValueError(f"model must be 'ehi' or 'de', got {model!r}")
    train = {k: v for k, v in train.items() if not (k in LOG_KEYS_OFF and v == LOG_KEYS_OFF[k])}
    if model == "ehi":
        return {**train, "use_tree": True}
    return {**{k: v for k, v in train.items() if k not in TREE_ONLY}, "use_tree": False}
