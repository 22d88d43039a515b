"""The step log's figure (``train.diag_every``, ehi.train.step_log): three panels over encoder steps,
so that one picture shows when the leaves empty and which loss term is pushing at that moment.

(a) leaf occupancy: the fraction of empty leaves and the largest leaf over the mean; (b) each loss
term (unweighted, as logged; the weighted total in grey); (c) the gradient norm each weighted term
sends to the tower (solid) and to the router (dashed), on a log scale (a term that cannot reach a
group, norm 0, is not drawn).
Dotted verticals mark where each epoch starts; a red one, the first logged step with more than 5%
of the leaves empty (the issue's bar for a tree that kept its leaves).
"""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ehi.report.figures import save_figure

GROUP_LINES = {"tower": "-", "router": "--"}
COLLAPSE_EMPTY_FRACTION = 0.05


def logged_terms(log: pd.DataFrame) -> list[str]:
    """The loss terms whose gradients the log holds (``grad_<term>_tower``), the total last."""
    terms = [c[len("grad_"):-len("_tower")] for c in log.columns if c.startswith("grad_") and c.endswith("_tower")]
    return sorted(terms, key=lambda t: t == "loss")


def plot_step_log(log: pd.DataFrame, path: str | os.PathLike, title: str = "") -> Path:
    """The three panels of one training's step log, written atomically to ``path`` (PNG)."""
    fig, (occupancy, losses, grads) = plt.subplots(3, 1, figsize=(7.5, 9.0), sharex=True)
    step = log["step"]
    occupancy.plot(step, log["leaf_empty_fraction"], color="tab:red", label="empty leaves (fraction)")
    occupancy.set_ylabel("empty leaves (fraction)", color="tab:red")
    occupancy.set_ylim(0, max(0.05, float(log["leaf_empty_fraction"].max()) * 1.1))
    over_mean = occupancy.twinx()
    over_mean.plot(step, log["leaf_max_over_mean"], color="tab:blue", label="largest leaf / mean")
    over_mean.set_ylabel("largest leaf / mean", color="tab:blue")
    occupancy.set_title("(a) leaf occupancy of the training's document-to-leaf assignment", fontsize=9)
    terms = logged_terms(log)
    # the total in black, beneath: it often runs on top of its largest term, which must stay visible
    colours = {t: f"C{i}" for i, t in enumerate(t for t in [*terms, "tree_updates"] if t != "loss")}
    colours["loss"] = "black"
    total = {"loss": dict(linewidth=2.5, alpha=0.35, zorder=1)}
    for term in [t for t in [*terms, "tree_updates"] if t in log]:
        losses.plot(step, log[term], color=colours[term], label=term, **total.get(term, {}))
    losses.set_ylabel("loss")
    losses.set_title("(b) loss terms (unweighted; loss, grey: the weighted total)", fontsize=9)
    losses.legend(fontsize=7, ncol=3)
    for term in terms:
        for group, style in GROUP_LINES.items():
            norm = log[f"grad_{term}_{group}"].where(lambda v: v > 0)  # 0: the term cannot reach the group
            if norm.notna().any():
                grads.plot(step, norm, color=colours[term], linestyle=style, label=f"{term} -> {group}",
                           **total.get(term, {}))
    grads.set_yscale("log")
    grads.set_ylabel("gradient norm")
    grads.set_xlabel("encoder step")
    grads.set_title("(c) gradient norm of each weighted term: to the tower (solid), to the router (dashed)",
                    fontsize=9)
    grads.legend(fontsize=7, ncol=2)
    for start in log.groupby("epoch")["step"].min().iloc[1:]:
        for ax in (occupancy, losses, grads):
            ax.axvline(start, color="gray", linestyle=":", linewidth=1)
    onset = collapse_onset(log)
    if onset is not None:
        for ax in (occupancy, losses, grads):
            ax.axvline(onset, color="tab:red", linewidth=1, alpha=0.6)
        occupancy.annotate(f"> {COLLAPSE_EMPTY_FRACTION:.0%} empty from step {onset}", (onset, 0.9),
                           xycoords=("data", "axes fraction"), fontsize=7, color="tab:red", xytext=(3, 0),
                           textcoords="offset points")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path)


def collapse_onset(log: pd.DataFrame, empty_fraction: float = COLLAPSE_EMPTY_FRACTION) -> int | None:
    """The first logged step at which more than ``empty_fraction`` of the leaves are empty, or None."""
    over = np.flatnonzero(log["leaf_empty_fraction"].to_numpy() > empty_fraction)
    return int(log["step"].iloc[over[0]]) if len(over) else None
