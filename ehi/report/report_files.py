"""The committed report files a dataset owns, and what a render may not take from another config.

A dataset's tables are ``results/tables/<dataset>_<kind>.*`` and its figures
``results/figures/<dataset>/``. Two guarantees, checked before anything is written:

- a dataset name whose table files are another committed dataset's (``synthetic_ablation``'s
  significance table is ``synthetic``'s ablation significance table) is refused at ``snakemake -n``
  (:func:`check_table_names`), so neither ``ehi compare --name`` nor a config rewrites them;
- a render whose config lacks rows a committed figure shows (SciFact rendered without
  config/scifact_dexml.yaml's ablation rows) is refused instead of deleting that figure and
  rewriting the tables without those rows (:func:`check_no_figure_dropped`).

A report-only run reads the cached ablation tests as they are, unless they hold no test of an
ablation variant that has results (:func:`untested_ablation_variants`): tests made before that
variant ran, which rule ablation_significance makes again.

The table pairs of the several-datasets rules (dev_choice, world_fit, world_calibration) are written
as one (:func:`write_table_pair`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from ehi.core.errors import ConfigError

# every <dataset>_<kind> table the rules of one dataset write (report, tune and train-log tables)
TABLE_KINDS = ("kmr", "kmr_seeds", "significance", "ablations", "ablation_significance", "leaf_balance", "timings",
               "claims", "train_log", "dev_leaf_count", "dev_tree_leaves", "dev_tree_recipe", "dev_tree_shape",
               "dev_tuning", "dev_tuning_b64", "dev_grid", "compare_check")
NOT_DATASETS = ("tables", "figures", "benchmarks")  # folders of results/ that hold no dataset's results


def table_stems(dataset: str) -> set[str]:
    return {f"{dataset}_{kind}" for kind in TABLE_KINDS}


def result_datasets(results: str | os.PathLike) -> list[str]:
    """The datasets with results under ``results`` (its folders but the shared ones)."""
    root = Path(results)
    return sorted(p.name for p in root.iterdir() if p.is_dir() and p.name not in NOT_DATASETS) if root.is_dir() else []


def check_table_names(dataset: str, results: str | os.PathLike = "results") -> None:
    """Refuse ``dataset`` where one of its table names is a table of another dataset with results."""
    for other in result_datasets(results):
        clash = sorted(table_stems(dataset) & table_stems(other)) if other != dataset else []
        if clash:
            raise ConfigError(f"dataset.name {dataset!r}: its table results/tables/{clash[0]}.* is dataset "
                              f"{other!r}'s table {clash[0][len(other) + 1:]}; give this dataset a name of its own")


def check_no_figure_dropped(committed: str | os.PathLike, rendered: str | os.PathLike) -> None:
    """Refuse a render into ``rendered`` that lacks a figure the folder ``committed`` holds."""
    committed, rendered = Path(committed), Path(rendered)
    if not committed.is_dir():
        return
    dropped = sorted(p.name for p in committed.glob("*.png") if not (rendered / p.name).exists())
    if dropped:
        more = f" (and {len(dropped) - 1} more)" if len(dropped) > 1 else ""
        raise ConfigError(f"{committed / dropped[0]}{more} would be dropped: this config lacks the rows it shows; "
                          "render with the configs that made it (the --configfile list its README command names), "
                          "or delete the figure first where its rows are gone for good")


def check_same_datasets(csv: str | os.PathLike, datasets: list[str]) -> None:
    """Refuse to replace the committed table ``csv`` of one list of datasets (its ``dataset`` column)
    with a table of another list: its name does not say which config made it."""
    csv = Path(csv)
    if not csv.is_file():
        return
    try:
        held = sorted(set(pd.read_csv(csv, usecols=["dataset"]).dataset.astype(str)))
    except (OSError, ValueError):
        return  # not a table of ours: replaced
    if held != sorted(set(datasets)):
        raise ConfigError(f"{csv} holds datasets {held}, this config's are {sorted(set(datasets))}: render it with "
                          f"the config that made it, or delete it first to make it of these")


def write_table_pair(table: pd.DataFrame, csv: str | os.PathLike, markdown: str, md: str | os.PathLike) -> None:
    """``table`` as CSV at ``csv`` (4 decimals) and ``markdown`` at ``md``, two files of one folder that
    replace their predecessors together or not at all (:func:`ehi.core.io.staged_files`)."""
    from ehi.core.io import staged_files

    csv, md = Path(csv), Path(md)
    if csv.parent != md.parent:
        raise ValueError(f"{csv} and {md}: a table pair lives in one folder")
    with staged_files(csv.parent) as tmp:
        table.to_csv(tmp / csv.name, index=False, float_format="%.4f")
        (tmp / md.name).write_text(markdown)


def untested_ablation_variants(tests: str | os.PathLike, per_query: dict[str, list[str]]) -> list[str]:
    """The ablation variants whose per-query tables (``per_query``: {variant: its ablation systems'
    tables}, main's included) are all there while the tests at ``tests`` hold none of their rows:
    tests made before those variants had results, which a report-only run must make again."""
    here = lambda paths: bool(paths) and all(os.path.exists(p) for p in paths)  # noqa: E731
    ran = [v for v, paths in per_query.items() if v != "main" and here(paths)] if here(per_query.get("main")) else []
    if not ran:
        return []
    import pyarrow.parquet as pq

    try:
        tested = set(pq.read_table(tests, columns=["variant"]).column("variant").to_pylist())
    except (OSError, ValueError, KeyError):  # unreadable, or no tests' table: made again
        return ran
    return [v for v in ran if v not in tested]

