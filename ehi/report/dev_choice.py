"""A training setting chosen on dev across datasets that differ in it (e.g. the encoder's learning rate).

Each dataset of a several-datasets config may be one point of a grid (``train.lr_encoder`` 1e-4 in
one, 1e-3 in another). A training's log holds its dev figures at every epoch, and selection keeps
the best epoch by its selection key (:func:`ehi.train.selection.log_selection_key`: the floor's or
the tree's dev curve area for EHI, exact dev nDCG@10 for DE). This module reads that kept value for
each (dataset, model, variant) and names, per model and variant, the dataset whose training is best
on dev: the point of the grid a study reports, chosen without reading test, and for DE and EHI alike.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ehi.core.catalog import dataset_results
from ehi.core.config_schema import ablation_variants
from ehi.core.errors import ConfigError, DataError
from ehi.evaluate.roles import EHI
from ehi.search.registry import TREE_KIND
from ehi.train.selection import best_epoch, log_selection_key


def kept_dev_value(log: pd.DataFrame) -> tuple[str, int | None, float]:
    """(selection key, kept epoch, its dev value) of one training log."""
    key = log_selection_key(log.columns)
    rows = log.to_dict("records")
    epoch = best_epoch(rows, key)
    value = next((float(r[key]) for r in rows if r["epoch"] == epoch), np.nan)
    return key, epoch, value


def dev_choice(logs: dict[tuple[str, str, str], pd.DataFrame]) -> pd.DataFrame:
    """``logs``: {(dataset, variant, model): training log} -> one row per log with its kept dev value
    and ``chosen`` = the best dataset for its (variant, model) (the first on ties). No log, or a log
    without a dev value (a training run without ``train.dev_eval``), is refused: nothing to choose on."""
    if not logs:
        raise ConfigError("dev_choice: no training to choose among: the config's datasets train no model "
                          "(their search.systems and ablation_systems search pre-trained encoders only)")
    rows = []
    for (dataset, variant, model), log in logs.items():
        key, epoch, value = kept_dev_value(log)
        if epoch is None:
            raise DataError(f"dev_choice: the training log of {dataset} {variant} {model} holds no dev value "
                            f"({key}): train it with train.dev_eval: true to choose on dev")
        rows.append({"dataset": dataset, "variant": variant, "model": model, "selection_key": key,
                     "kept_epoch": epoch, "epochs_run": int(log.epoch.max()), "dev_value": value})
    table = pd.DataFrame(rows)
    best = table.groupby(["variant", "model"]).dev_value.transform("max")
    table["chosen"] = (table.dev_value == best) & ~table.duplicated(["variant", "model", "dev_value"])
    return table.sort_values(["variant", "model", "dataset"]).reset_index(drop=True)


def dev_choice_markdown(table: pd.DataFrame) -> str:
    return ("Each training's dev value at the epoch selection kept (its selection key); per model and "
            "variant the dataset marked chosen is the setting reported, picked on dev alone.\n\n"
            + table.to_markdown(index=False, floatfmt=".4f") + "\n")


def _models(systems) -> set[str]:
    """The models that systems train (the part before '+'; ``pre`` trains nothing)."""
    return {s.split("+")[0] for s in systems} & {"de", "ehi"}


def training_logs(name: str, cfg: dict, key_order: list[str]) -> dict[tuple[str, str, str], str]:
    """{(dataset, variant, model): its training log's path} of one dataset's config: the models its
    main systems train, and in each ablation row (its variant path with the train keys in
    ``key_order``, as the pipeline names it) those its ablation systems train."""
    pairs = {("main", m) for m in _models(cfg["search"]["systems"])}
    ablation_models = _models(cfg.get("ablation_systems") or [f"{EHI}+{TREE_KIND}"])  # the schema's default
    for paths in ablation_variants(cfg.get("ablations") or {}, cfg["train"], key_order).values():
        pairs |= {(v, m) for v in paths for m in ablation_models}
    return {(name, v, m): f"{dataset_results(name)}/{v}/train_log/{m}.parquet"
            for v, m in sorted(pairs, key=lambda p: (p[0] != "main", p))}


def grid_choice(logs: dict[str, pd.DataFrame], settings: dict[str, dict]) -> tuple[pd.DataFrame, dict]:
    """One model's grid (``train: {key: {choose: [...]}}``, ehi.train.grid) chosen on dev.

    ``logs``: {point path: its training log}; ``settings``: {point path: the grid values it sets}.
    Returns one row per point (its settings, the kept epoch and its dev value, ``chosen``: the best,
    the first listed on ties) and the choice ({point, settings, selection_key, dev_value}). A grid
    none of whose trainings has a dev value is refused: there is nothing to choose by."""
    from ehi.core.errors import ConfigError

    rows = []
    for point, log in logs.items():
        key, epoch, value = kept_dev_value(log)
        rows.append({"point": point, **settings[point], "selection_key": key, "kept_epoch": epoch,
                     "epochs_run": int(log.epoch.max()), "dev_value": value})
    table = pd.DataFrame(rows)
    if table.dev_value.isna().all():
        raise ConfigError(f"dev grid over {', '.join(logs)}: no training logged a dev value (train.dev_eval: true "
                          "and select: dev are needed to choose on dev)")
    best = int(table.dev_value.fillna(-np.inf).to_numpy().argmax())
    table["chosen"] = table.index == best
    chosen = table.iloc[best]
    choice = {"point": chosen.point, "settings": settings[chosen.point], "selection_key": chosen.selection_key,
              "dev_value": float(chosen.dev_value)}
    return table, choice


def grid_rows(tables: dict[tuple[str, str], pd.DataFrame]) -> pd.DataFrame:
    """Every grid of a dataset, every point tried: {(variant, model): :func:`grid_choice`'s table}."""
    frames = [t.assign(variant=v, model=m) for (v, m), t in tables.items()]
    table = pd.concat(frames, ignore_index=True)
    first = ["variant", "model", "point"]
    return table[first + [c for c in table.columns if c not in first]]


def grid_markdown(tables: dict[tuple[str, str], pd.DataFrame]) -> str:
    table = grid_rows(tables)
    return ("Every point of each grid chosen on dev (train: {key: {choose: [...]}}): its dev value at the "
            "epoch its own selection kept; the point marked chosen is the one the setting reports, and the "
            "only one searched on test.\n\n" + table.to_markdown(index=False, floatfmt=".4f") + "\n")
