"""Which ``train`` keys each model reads: the DE baseline trains no tree, so the tree's keys are
not its settings. The training rules' params carry only these (``workflow/rules/common.smk``), so
changing ``branching`` or a tree loss retrains EHI and leaves DE and its searches alone.

Kept free of heavy imports: the Snakefile imports it while it parses.
"""

from __future__ import annotations

# TrainConfig fields only the tree reads (ehi.train.loop builds no tree for DE, the tree losses are
# zero without one, the dev tree figures and the k-means floor need a tree); DE trains with their
# defaults, which it never reads.
TREE_ONLY = (
    "height", "branching", "indexer_hidden", "indexer_init", "path_layout", "indexer_per_node", "lr_indexer",
    "lambda_indexing", "lambda_intra_leaf", "margin_indexing", "lambda_neighbour", "neighbour_k",
    "neighbour_anchors", "neighbour_temperature", "indexer_steps", "indexer_steps_lr", "indexer_steps_batch",
    "indexer_steps_schedule", "indexing_negatives", "diagnostics", "diagnostic_beam", "dev_budget", "floor",
)


def model_settings(train: dict, model: str) -> dict:
    """The ``train`` settings ``model`` ("ehi" or "de") reads, with ``use_tree`` set for it."""
    if model not in ("ehi", "de"):
        raise ValueError(f"model must be 'ehi' or 'de', got {model!r}")
    if model == "ehi":
        return {**train, "use_tree": True}
    return {**{k: v for k, v in train.items() if k not in TREE_ONLY}, "use_tree": False}
