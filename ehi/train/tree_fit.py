"""Training the tree alone on fixed (detached) embeddings: the one loop every tree-only fit uses.

Three callers share it: the dev tree-shape tool (:mod:`ehi.train.tree_shape`), the benchmarks'
label-free tree (``benchmarks/tree.py``) and the joint training loop's extra tree updates
(``train.indexer_steps``, :mod:`ehi.train.tree_updates`). Each brings its own batch objective, a
function ``rng -> scalar loss``; :class:`TreeFitter` owns the optimizer, so its moments survive
across calls (the joint loop calls it after every encoder step and checkpoints it).

Why tree-only updates exist at all: in joint training the tree gets one optimizer step per encoder
step, and on a CPU budget that is a few dozen steps in all (SciFact: 72), far from what the tree
needs (300+ on frozen embeddings). A tree step on cached embeddings costs milliseconds.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
import torch

from ehi.model.tree import TreeIndexer
from ehi.train.losses.objective import indexing_loss

BatchLoss = Callable[[np.random.Generator], torch.Tensor]
SCHEDULES = ("constant", "linear")


class TreeFitter:
    """AdamW over a tree's parameters with a constant or linearly decaying learning rate."""

    def __init__(self, tree: TreeIndexer, lr: float, weight_decay: float = 0.0, schedule: str = "constant",
                 total_steps: int | None = None):
        if schedule not in SCHEDULES:
            raise ValueError(f"tree schedule must be one of {SCHEDULES}, got {schedule!r}")
        if schedule == "linear" and not total_steps:
            raise ValueError("a linear tree schedule needs total_steps")
        self.tree, self.schedule, self.total_steps, self.done = tree, schedule, total_steps, 0
        self.opt = torch.optim.AdamW(tree.parameters(), lr=lr, weight_decay=weight_decay)
        self.base_lr = lr

    def _lr(self) -> float:
        if self.schedule == "constant":
            return self.base_lr
        return self.base_lr * max(0.0, 1.0 - self.done / self.total_steps)

    def run(self, steps: int, batch_loss: BatchLoss, rng: np.random.Generator) -> float:
        """``steps`` updates, each on ``batch_loss(rng)``; returns the mean loss (nan for 0 steps)."""
        total = 0.0
        for _ in range(steps):
            for group in self.opt.param_groups:
                group["lr"] = self._lr()
            loss = batch_loss(rng)
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            self.opt.step()
            self.done += 1
            total += float(loss.detach())
        return total / steps if steps else math.nan


def run_tree_steps(tree: TreeIndexer, batch_loss: BatchLoss, steps: int, lr: float, rng: np.random.Generator,
                   weight_decay: float = 0.0) -> tuple[TreeIndexer, float]:
    """Train ``tree`` for ``steps`` updates at a constant ``lr``; returns it in eval mode and the
    last step's loss (nan for 0 steps)."""
    fitter, last = TreeFitter(tree, lr, weight_decay), math.nan
    for _ in range(steps):
        last = fitter.run(1, batch_loss, rng)
    return tree.eval(), last


def corpus_negatives(q_rows: np.ndarray, n_docs: int, k: int, relevant: list[np.ndarray],
                     rng: np.random.Generator) -> np.ndarray:
    """``k`` documents per pair drawn uniformly from the whole corpus, never one judged relevant to
    the pair's query -> (n, k) doc rows. Why: L_indexing's in-batch negatives are other training
    positives only (a few hundred documents); pushing random irrelevant documents out of the
    query's bucket is what balances the load (the authors' words)."""
    out = np.empty((len(q_rows), k), dtype=np.int64)
    for i, q in enumerate(q_rows):
        judged = relevant[q]
        if len(judged) >= n_docs:
            raise ValueError("a query judges every document relevant: no corpus negative exists")
        picked = np.empty(0, dtype=np.int64)
        while len(picked) < k:  # rejection sampling: judged documents are a tiny share
            draw = rng.integers(0, n_docs, k - len(picked))
            picked = np.concatenate([picked, draw[~np.isin(draw, judged)]])
        out[i] = picked
    return out


def pair_indexing_loss(tree: TreeIndexer, queries: torch.Tensor, docs: torch.Tensor, pair_q: np.ndarray,
                       pair_d: np.ndarray, batch_size: int, margin: float, rng: np.random.Generator,
                       negatives: int = 0, relevant: list[np.ndarray] | None = None,
                       layout: str = "node") -> torch.Tensor:
    """L_indexing on one random batch of (query, positive) pairs of fixed embeddings.

    Negatives: every other batch document (in-batch) plus ``negatives`` corpus documents per pair.
    Validity: with ``relevant`` (per query row, its judged doc rows) a column is a negative for a
    query unless judged relevant to it; without it (the dev shape tool's historic form) unless it is
    the same document as the query's positive.
    """
    batch = rng.choice(len(pair_q), min(batch_size, len(pair_q)), replace=False)
    q_rows, d_rows = pair_q[batch], pair_d[batch]
    if negatives:
        extra = corpus_negatives(q_rows, len(docs), negatives, relevant, rng).ravel()
        d_rows = np.concatenate([d_rows, extra])
    if relevant is None:
        mask = d_rows[None, :] != d_rows[: len(q_rows), None]
    else:
        mask = np.stack([~np.isin(d_rows, relevant[q]) for q in q_rows])
    return indexing_loss(tree(queries[q_rows]), tree(docs[d_rows]), torch.arange(len(q_rows)),
                         torch.from_numpy(mask), margin=margin, layout=layout)


def balance_loss(tree: TreeIndexer, docs: torch.Tensor, rng: np.random.Generator, n: int = 512) -> torch.Tensor:
    """How unevenly the tree spreads the corpus: per level, B * sum_c u_c^2 - 1 with u the mean child
    probability over ``n`` random documents (0 when every child is used equally, B - 1 when one
    takes all), averaged over levels; for H = 1 that is the leaves' load. L_indexing on a few hundred
    training pairs piles the rest of the corpus into few leaves, which costs the lowest budgets."""
    rows = torch.from_numpy(rng.integers(0, len(docs), min(n, len(docs))))
    u = tree(docs[rows]).probs.mean(0)  # (H, B)
    return (tree.branching * (u * u).sum(-1) - 1).mean()


def with_balance(batch_loss: BatchLoss, tree: TreeIndexer, docs: torch.Tensor, weight: float,
                 rng: np.random.Generator) -> torch.Tensor:
    """``batch_loss`` plus ``weight`` times :func:`balance_loss` (``train.lambda_balance``)."""
    return batch_loss(rng) + weight * balance_loss(tree, docs, rng)
