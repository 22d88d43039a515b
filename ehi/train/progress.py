"""The lines a person follows a training by: a start line, one per epoch, an end line.

They go to the ``ehi.train.progress`` logger, which the training script also sends to stdout, so
they reach the console Snakemake runs in, while the rule's log file keeps them beside the progress
bars and everything else (tail -f logs/<dataset>/<variant>/train_<model>.log for those).
"""

from __future__ import annotations

import logging
import math

log = logging.getLogger("ehi.train.progress")

LOSS_TERMS = ("loss", "siamese", "indexing", "intra_leaf", "neighbour")  # ehi.train.step's, total first


def started(name: str, n_pairs: int, n_batches: int, epochs: int, out, first_epoch: int) -> None:
    resumed = f", resuming after epoch {first_epoch}" if first_epoch else ""
    log.info("train %s: %d pairs, %d batches per epoch, %d epochs%s -> %s", name, n_pairs, n_batches, epochs,
             resumed, out)


def _fmt(value) -> str:
    return f"{value:.4f}" if isinstance(value, float) and math.isfinite(value) else str(value)


def epoch_done(name: str, row: dict, epochs: int) -> None:
    """One epoch's mean loss terms, its dev metrics (``dev_*``) and its time."""
    losses = " ".join(f"{k}={_fmt(row[k])}" for k in LOSS_TERMS if k in row)
    dev = " ".join(f"{k[4:]}={_fmt(v)}" for k, v in row.items() if k.startswith("dev_"))
    log.info("train %s: epoch %d/%d %s%s (%.1f s)", name, row["epoch"], epochs, losses,
             f" | dev {dev}" if dev else "", row.get("seconds", float("nan")))


def finished(name: str, summary: dict, out) -> None:
    how = "stopped early on dev" if summary["stopped_early"] else ("done" if summary["finished"] else "paused")
    tree = f" ({summary['selected_tree']} tree)" if summary.get("selected_tree") else ""
    log.info("train %s: %s after %d epochs (%d steps), kept epoch %s%s -> %s", name, how, summary["epochs_done"],
             summary["steps"], summary["selected_epoch"], tree, out)
