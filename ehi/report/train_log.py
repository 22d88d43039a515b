"""The training-log table: every epoch of every trained model, its dev record and leaf balance.

One row per (model, epoch) with the columns :data:`ehi.evaluate.dev_tuning.EPOCH_COLUMNS` the log
has (dev figures, the curve areas and the floor's choice where logged, largest leaf / mean and
empty leaves) and ``kept``: the epoch dev selection kept, and which tree it kept (trained, or the
floor's k-means tree).
"""

from __future__ import annotations

import pandas as pd

from ehi.evaluate.dev_tuning import EPOCH_COLUMNS, selected_epoch


def train_log_table(logs: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """``logs``: {model name: its training log} -> one row per epoch (empty without logs)."""
    rows = []
    for name, log in logs.items():
        chosen = selected_epoch(log) if any(c.startswith("dev_") for c in log.columns) else None
        keep = ["epoch", *[c for c in EPOCH_COLUMNS if c in log]]
        for row in log[keep].to_dict("records"):
            kept = ""
            if row["epoch"] == chosen:
                kept = "kmeans tree" if row.get("dev_floor_kmeans") == 1.0 else "yes"
            rows.append({"model": name, **row, "kept": kept})
    return pd.DataFrame(rows)
