"""The metric tables checked where they are read: what no search can score is refused, in one line
naming the file and what is wrong, before anything is computed from it.

A per-query table (rule evaluate's) is read by rule summarize, rule significance and rule
ablation_significance (:func:`read_per_query`, the one way they read it); a summary by the report
(:func:`check_metric_rows`, through :func:`ehi.report.summary_checks.check_summary_values`). Each
holds rows, metrics the registry knows (:func:`ehi.core.metric_names.metric_fault`: ranx's
families, psp and the plugins'), and values a metric can take (finite, and in [0, 1] for nDCG,
recall, MRR and the other unit-interval families). A per-query table further holds every judged
query of its split once at each search and metric: the split's queries are the judged queries of
the prepared dataset's qrels where the rule has them (``resources/<dataset>/data/qrels.parquet``),
else the queries of every table read together (a report-only run on a fresh clone has no
prepared data), so a table with some queries' rows dropped is refused either way.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from ehi.core.errors import DataError
from ehi.core.io import read_provenance, read_table
from ehi.core.metric_names import UNIT_INTERVAL, family, metric_fault
from ehi.core.ranking import GROUP


def _at(row: pd.Series) -> str:
    return ", ".join(f"{c}={row[c]}" for c in ("system", "variant", "budget_param", "budget_value") if c in row)


def check_metric_rows(frame: pd.DataFrame, path: str | os.PathLike, what: str, nan_fraction: bool = False) -> pd.DataFrame:
    """``frame`` (a ``what`` table: summary or per_query) as read, or a DataError naming ``path``:
    no rows, a metric the registry does not know, a value no search can score, a fraction visited
    outside [0, 1] (NaN allowed where ``nan_fraction``: a query missing from a run)."""
    from ehi.evaluate.metric_registry import families

    if frame.empty:
        raise DataError(f"{path}: a {what} table without rows")
    names = frame.metric.astype(str).unique()
    fault = next(filter(None, (metric_fault(name, families()) for name in names)), None)
    if fault:
        raise DataError(f"{path}: metric {fault}")
    value = frame.value.to_numpy(dtype=float)
    bounded = frame.metric.map(family).isin(UNIT_INTERVAL).to_numpy()
    bad = ~np.isfinite(value) | (value < 0) | (bounded & (value > 1))
    if bad.any():
        row = frame[bad].iloc[0]
        raise DataError(f"{path}: {int(bad.sum())} impossible metric value(s), first {float(row.value)} at {_at(row)}, "
                        f"metric={row.metric} (expected finite, >= 0, and <= 1 for {row.metric})")
    frac = frame.frac_visited.to_numpy(dtype=float)
    bad = (np.isnan(frac) & (not nan_fraction)) | np.isinf(frac) | (frac < 0) | (frac > 1)
    if bad.any():
        row = frame[bad].iloc[0]
        raise DataError(f"{path}: {int(bad.sum())} rows with frac_visited {float(row.frac_visited)}, first at "
                        f"{_at(row)} (expected a finite fraction in [0, 1])")
    return frame


def check_per_query(frame: pd.DataFrame, path: str | os.PathLike, query_ids) -> pd.DataFrame:
    """``frame`` (a per-query table) as read, or a DataError naming ``path``: the checks of
    :func:`check_metric_rows`, and each search's every metric holding each of ``query_ids`` (the
    split's judged queries) once."""
    check_metric_rows(frame, path, "per_query", nan_fraction=True)
    expected = set(map(str, query_ids))
    keys = [*GROUP, "metric"]
    repeated = frame.duplicated([*keys, "query_id"])
    if repeated.any():
        row = frame[repeated].iloc[0]
        raise DataError(f"{path}: {int(repeated.sum())} rows repeat a query, first {row.query_id} at {_at(row)}, "
                        f"metric={row.metric}")
    held = frame.groupby(keys, sort=False).query_id.agg(lambda ids: set(ids.astype(str)))
    for key, ids in held.items():
        missing, foreign = expected - ids, ids - expected
        if missing or foreign:
            at = ", ".join(f"{k}={v}" for k, v in zip(keys, key))
            if missing:
                raise DataError(f"{path}: {len(missing)} of the split's {len(expected)} judged queries missing at {at} "
                                f"(first {sorted(missing)[0]}): a per-query table holds every one")
            raise DataError(f"{path}: {len(foreign)} queries at {at} are not judged queries of the split "
                            f"(first {sorted(foreign)[0]})")
    return frame


def split_query_ids(qrels: str | os.PathLike, split: str) -> set[str]:
    """The judged queries of ``split`` in the prepared qrels table ``qrels`` (those rule evaluate scores)."""
    from ehi.data.judgements import judged_query_ids

    table = read_table(qrels, "qrels")
    return judged_query_ids(table[table.split == split])


def read_per_query(paths, qrels: str | os.PathLike | None = None) -> list[pd.DataFrame]:
    """The per-query tables ``paths``, each read and checked (:func:`check_per_query`); the queries
    each must hold are the judged queries of its split (the ``split`` its writer recorded) in
    ``qrels`` where given, else every query of the tables read together."""
    paths = list(paths)
    frames = [read_table(p, "per_query") for p in paths]
    every = set().union(*(set(f.query_id.astype(str)) for f in frames))
    splits: dict[str, set[str]] = {}
    for path, frame in zip(paths, frames):
        split = read_provenance(path).get("split")
        if qrels is not None and split is not None and split not in splits:
            splits[split] = split_query_ids(qrels, split)
        check_per_query(frame, path, splits.get(split, every))
    return frames
