"""The lines a person follows a training by: a start line, lines within an epoch (at each quarter
of its steps and every minute between: steps done, steps per second, time left), one per epoch,
an end line.

They go to the ``ehi.train.progress`` logger, which the training script also sends to stdout, so
they reach the console Snakemake runs in, while the rule's log file keeps them beside the progress
bars and everything else (tail -f logs/<dataset>/<variant>/train_<model>.log for those).
"""

from __future__ import annotations

import logging
import math
import os
import time
from typing import Callable

from ehi.core.console import training_label

log = logging.getLogger("ehi.train.progress")

LOSS_TERMS = ("loss", "siamese", "indexing", "intra_leaf", "neighbour")  # ehi.train.step's, total first
EVERY_SECONDS = 60.0  # within an epoch; a SciFact epoch on a CPU takes up to 18 minutes


def job_label(out_dir: str | os.PathLike) -> str:
    """``[synthetic seed~1 floor]`` for the training the workflow runs in ``out_dir``
    (ehi.core.console.training_label: the dataset and setting the rule's side named it with), so a
    console line says which one it is about when several train at once; "" for a folder no rule
    named (a training run by hand)."""
    return training_label(out_dir)


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


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(round(seconds)), 60)
    return f"{minutes} min {secs} s" if minutes else f"{secs} s"


class EpochProgress:
    """Within one epoch, a line at each quarter of its steps and whenever ``every`` seconds have
    passed since the last line: the step, the mean loss so far, steps per second and the time the
    epoch has left at that rate (``clock`` is injectable for tests). The quarters show a short
    epoch moving; the minutes keep a long one (a SciFact epoch on a CPU) from going quiet."""

    def __init__(self, name: str, epoch: int, epochs: int, n_batches: int, every: float = EVERY_SECONDS,
                 clock: Callable[[], float] = time.monotonic):
        self.name, self.epoch, self.epochs, self.n_batches, self.every, self.clock = (
            name, epoch, epochs, n_batches, every, clock)
        self.start = self.last = clock()
        self.quarters = {math.ceil(n_batches * q / 4) for q in (1, 2, 3)}

    def step(self, done: int, sums: dict[str, float]) -> None:
        """After ``done`` batches of the epoch, with ``sums`` the running sums of the loss terms."""
        now = self.clock()
        due = done in self.quarters or now - self.last >= self.every
        if not due or done >= self.n_batches:  # the epoch line reports the end
            return
        self.last = now
        rate = done / max(now - self.start, 1e-9)
        loss = f" loss={_fmt(sums['loss'] / done)}" if "loss" in sums else ""
        log.info("train %s: epoch %d/%d step %d/%d (%d%%)%s, %.2f steps/s, %s left in the epoch", self.name,
                 self.epoch, self.epochs, done, self.n_batches, 100 * done // self.n_batches, loss, rate,
                 _duration((self.n_batches - done) / rate))
