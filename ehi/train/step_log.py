"""The step log (``train.diag_every``): what moves the documents between leaves, step by step.

The epoch log shows a collapse after the fact (an epoch's empty leaves); this one shows when it
starts and which loss term drives it. Every ``diag_every`` encoder steps (and at the first) one row:

* ``epoch`` (1-based, as the epoch log) and ``step``: encoder steps done before this one, so every
  value of the row describes the weights after ``step`` updates;
* the leaf occupancy of the assignment the training holds (the embedding cache's ``doc_leaf``,
  which the hard-negative miners read), read once, at the start of the step, before its batch
  updates the cache (:func:`ehi.model.tree_stats.leaf_occupancy`). With ``indexer_steps`` the
  previous step's tree-only updates (and their leaf reassignment, every ``indexer_steps_refresh``
  steps) have run by then: ``occupancy_after_tree_updates`` says so;
* each loss term's value, unweighted as in the epoch log (``loss``: the weighted total;
  ``tree_updates``: the mean loss of the step's tree-only updates, run after it);
* ``grad_<term>_tower`` / ``grad_<term>_router``: the L2 norm of the gradient the weighted term
  (lambda times the term: what it adds to the loss) sends to the encoder's parameters and to the
  tree's, each term alone (``torch.autograd.grad`` with the graph kept for the step's backward,
  which leaves ``.grad`` alone), and ``grad_loss_*`` for the whole loss, read from ``.grad``
  before clipping.

Only diagnostic steps pay for the extra backward passes; the training itself is unchanged (the
same weights with the log on or off). One process only: under several each rank holds only its
share of the gradient.
"""

from __future__ import annotations

import math

import torch

from ehi.model.tree_stats import leaf_occupancy

STEP_LOG = "step_log.parquet"  # in the training's out dir
TERM_WEIGHTS = {"siamese": "lambda_siamese", "indexing": "lambda_indexing", "intra_leaf": "lambda_intra_leaf",
                "neighbour": "lambda_neighbour"}  # the terms ehi.train.step returns, and their weights


def is_due(step: int, every: int) -> bool:
    """Whether the step after ``step`` steps done is a diagnostic one (the first always is)."""
    return every > 0 and step % every == 0


def parameter_groups(opt: torch.optim.Optimizer) -> dict[str, list[torch.Tensor]]:
    """The tower's parameters and the router's, from the optimizer's groups (ehi.train.loop.make_optimizer:
    the encoder's first, then the tree's where there is one)."""
    groups = opt.param_groups
    return {"tower": groups[0]["params"], "router": groups[1]["params"] if len(groups) > 1 else []}


def start_row(epoch: int, step: int, cfg, cache, indexer, tree_updates: bool) -> dict | None:
    """A diagnostic step's row, begun before the step's batch refreshes the cache (an
    :class:`~ehi.train.batches.EmbeddingCache`): where it is and how the documents sit in the
    leaves; None on any other step (and without a tree)."""
    if indexer is None or not is_due(step, cfg.diag_every):
        return None
    return {"epoch": epoch + 1, "step": step, **leaf_occupancy(cache.doc_leaf, indexer.n_leaves),
            "occupancy_after_tree_updates": tree_updates and step > 0}


def term_gradients(terms: dict[str, torch.Tensor], cfg, opt: torch.optim.Optimizer) -> dict:
    """Each term's value and the norm of the gradient its weighted value sends to each parameter
    group (:func:`parameter_groups`); the graph is kept."""
    groups = parameter_groups(opt)
    row = {"loss": float(terms["loss"].detach())}
    named = [(group, p) for group, params in groups.items() for p in params if p.requires_grad]
    for name, weight in TERM_WEIGHTS.items():
        if name not in terms:
            continue
        value = getattr(cfg, weight) * terms[name]
        row[name] = float(terms[name].detach())
        grads = (torch.autograd.grad(value, [p for _, p in named], retain_graph=True, allow_unused=True)
                 if value.requires_grad else [None] * len(named))
        row.update(_group_norms(name, [(group, g) for (group, _), g in zip(named, grads)], groups))
    return row


def loss_gradients(opt: torch.optim.Optimizer) -> dict:
    """The whole loss's gradient norm per group, from ``.grad`` after the backward, before clipping."""
    groups = parameter_groups(opt)
    return _group_norms("loss", [(group, p.grad) for group, params in groups.items() for p in params], groups)


def _group_norms(term: str, grads: list[tuple[str, torch.Tensor | None]], groups) -> dict:
    squares = dict.fromkeys(groups, 0.0)
    for group, g in grads:
        if g is not None:
            squares[group] += float(g.detach().double().pow(2).sum())
    return {f"grad_{term}_{group}": math.sqrt(s) for group, s in squares.items()}

