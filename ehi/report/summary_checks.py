"""The values of a summary checked before they are rendered: what no search can score is refused.

:func:`ehi.core.io.read_table` already refuses a summary without rows, with a NaN value or with a
repeated key. A value can still be impossible: an nDCG@10 of -5 or 7, a recall of ``inf``, a NaN
fraction visited (which renders every cell of its system as the mark of a budget not reached), a
metric no registry knows (``foo@10``), or rows of another dataset copied in: the checks every
metric table gets (:func:`ehi.evaluate.result_checks.check_metric_rows`), and the dataset's. Each
is a :class:`DataError` naming the file and the first row, before any table or figure is rendered,
so the previous ones stay as they were.

Rows of a system the config does not list (results cached before a system was dropped from
``search.systems``, re-rendered by a report-only run) are possible values of a system no longer
asked for: :func:`listed_systems_only` leaves them out of the tables and says so, in the log and
in a note under the table.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from ehi.core.errors import DataError
from ehi.core.metric_names import UNIT_INTERVAL
from ehi.evaluate.result_checks import check_metric_rows


def check_summary_values(summary: pd.DataFrame, path: str | os.PathLike, dataset: str) -> pd.DataFrame:
    """``summary`` as read, or a DataError naming ``path`` and its first impossible row (rows of
    another dataset, then :func:`ehi.evaluate.result_checks.check_metric_rows`)."""
    other = summary[summary.dataset != dataset]
    if len(other):
        raise DataError(f"{path}: {len(other)} rows of dataset {other.dataset.iloc[0]!r}, in the results of {dataset!r}")
    return check_metric_rows(summary, path, "summary")


def check_significance_values(sig: pd.DataFrame, path: str | os.PathLike, dataset: str | None = None) -> pd.DataFrame:
    """``sig`` (a significance table) as read, or a DataError naming ``path`` and its first
    impossible row: another dataset's rows, a p-value outside [0, 1], a mean no search can score."""
    if dataset is not None and len(sig) and (sig.dataset != dataset).any():
        other = sig.dataset[sig.dataset != dataset].iloc[0]
        raise DataError(f"{path}: rows of dataset {other!r}, in the results of {dataset!r}")
    bounded = sig.metric.str.split("@").str[0].isin(UNIT_INTERVAL).to_numpy() if len(sig) else np.zeros(0, bool)
    for column, upper in (("p_value", True), ("p_adjusted", True), ("mean_a", False), ("mean_b", False)):
        if column not in sig:
            continue
        value = sig[column].to_numpy(dtype=float)
        bad = ~np.isfinite(value) | (value < 0) | ((value > 1) & (bounded | upper))
        if bad.any():
            row = sig[bad].iloc[0]
            raise DataError(f"{path}: {int(bad.sum())} impossible {column} value(s), first {row[column]} at "
                            f"{row.system_a} vs {row.system_b}, {row.metric} at {row.budget} (expected in [0, 1])")
    return sig


def listed_systems_only(frame: pd.DataFrame, what: str, systems, columns=("system",)) -> tuple[pd.DataFrame, str]:
    """(``frame``'s rows whose ``columns`` all name one of ``systems``, a sentence naming the systems
    left out, empty where none was); ``what`` names the results in that sentence."""
    listed = frame[list(columns)].isin(set(systems)).all(axis=1)
    extra = sorted(set(frame.loc[~listed, list(columns)].to_numpy().ravel()) - set(systems))
    if not extra:
        return frame, ""
    return frame[listed], (f"{what} hold(s) rows of {', '.join(extra)}, which this config does not list "
                           "(search.systems, evaluation.variant_systems): left out of the tables.")
