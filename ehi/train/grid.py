"""Training settings chosen on dev: a ``train`` key given as ``{choose: [v1, v2, ...]}``.

A screen is declared in the config it reports, not spread over datasets named after a value::

    train:
      lr_encoder: {choose: [1.0e-4, 1.0e-3]}

Each model (DE and EHI alike) is trained at every point of the grid of the keys it reads (DE reads
no tree key, so a grid over a tree loss weight trains DE once). A point is an ordinary variant, named
by its settings as an ablation row is (``lr_encoder~0.0001``, or ``lr_encoder~0.0001/floor~kmeans``
for an ablation row's point), so two settings that reach the same point train it once. Points are
trained with the main seed only (``train.seed``); rule ``dev_grid`` reads each point's kept dev value
(:func:`ehi.report.dev_choice.kept_dev_value`: the value its own selection maximised) and names the
best. The setting's own model (``main``, or the ablation row) is that point's model, copied; its
other seeds are trained at the chosen point. Only the chosen point is searched, so the test split is
read once, for it.

Light to import (no torch, no pandas at import): the Snakefile calls it while it parses.
"""

from __future__ import annotations

import itertools

from ehi.core.errors import ConfigError

CHOOSE = "choose"
# a seed is a replica, not a setting; where a tree starts names which runs exist
NOT_GRIDDED = ("seeds", "seed", "encoder_init")


def is_choice(value) -> bool:
    return isinstance(value, dict) and set(value) == {CHOOSE}


def take_grid(train: dict, where: str = "train") -> dict[str, list]:
    """Pop the grid out of ``train`` (in place): each ``{choose: [...]}`` value is replaced by its first
    value, so the schema and every check see a plain setting, and {key: values} is returned."""
    grid = {}
    for key, value in list(train.items()):
        if isinstance(value, dict) and CHOOSE in value:
            values = value[CHOOSE]
            if set(value) != {CHOOSE} or not isinstance(values, list) or not values:
                raise ConfigError(f"config {where}.{key}: a grid is {{choose: [value, ...]}} with at least one value")
            if key in NOT_GRIDDED:
                raise ConfigError(f"config {where}.{key}: {key} is not chosen on dev (it names which runs exist, not a setting to compare)")
            if len({repr(v) for v in values}) != len(values):
                raise ConfigError(f"config {where}.{key}: the grid {values!r} repeats a value")
            grid[key] = list(values)
            train[key] = values[0]
    return grid


def as_choices(grid: dict[str, list]) -> dict[str, dict]:
    """The grid written back as config values ({key: {choose: values}})."""
    return {key: {CHOOSE: list(values)} for key, values in grid.items()}


def model_grid(grid: dict[str, list], model: str, fixed=()) -> dict[str, list]:
    """The part of ``grid`` that ``model`` reads, less the keys a variant sets itself (``fixed``)."""
    from ehi.train.model_keys import TREE_ONLY

    return {k: v for k, v in grid.items() if k not in fixed and (model == "ehi" or k not in TREE_ONLY)}


def combinations(grid: dict[str, list]) -> list[dict]:
    """Every point of ``grid`` as {key: value}, in the order the values are listed."""
    keys = list(grid)
    return [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]


def point_settings(settings: dict[str, str], point: dict, key_order: list[str]) -> dict[str, str]:
    """The settings of ``point`` within a setting (``settings``: main's, {}, or an ablation row's texts,
    :func:`ehi.core.config_schema.ablation_rows`): the row's and the point's, each as the text its
    variant path writes, keys in ``key_order``."""
    from ehi.core.config_schema import ablation_rows, variant_columns

    parts = dict(settings)
    parts.update(ablation_rows({"point": [point]}, point, key_order)["point"][0])
    return {k: parts[k] for k in variant_columns(list(parts), key_order)}


def point_path(settings: dict[str, str], point: dict, key_order: list[str]) -> str:
    """The variant path of ``point`` within a setting (:func:`point_settings`), as Paramspace writes it."""
    from ehi.core.config_schema import variant_path

    return variant_path(point_settings(settings, point, key_order))


def grid_points(settings: dict[str, str], grid: dict[str, list], key_order: list[str]) -> dict[str, dict]:
    """{point path: its grid values} of ``grid`` (already narrowed to one model and variant) within the
    setting whose texts are ``settings`` (:func:`point_settings`)."""
    return {point_path(settings, point, key_order): point for point in combinations(grid)}


def grid_settings(settings: dict[str, str], grid: dict[str, list], key_order: list[str]) -> dict[str, dict[str, str]]:
    """{point path: every key it sets, as texts} of the points :func:`grid_points` names: what a
    point's training is given, read from its settings rather than from its path."""
    from ehi.core.config_schema import variant_path

    points = [point_settings(settings, point, key_order) for point in combinations(grid)]
    return {variant_path(keys): keys for keys in points}


def apply_choice(settings: dict, choice: dict) -> dict:
    """A training's settings with each gridded key (``{choose: [...]}``) set to the dev choice's value;
    a choice outside its grid, or a grid left without a choice, is refused."""
    out = dict(settings)
    for key, value in settings.items():
        if not is_choice(value):
            continue
        if key not in choice:
            raise ConfigError(f"train.{key}: a grid to choose from on dev, but the dev choice names no value for it")
        if choice[key] not in value[CHOOSE]:
            raise ConfigError(f"train.{key}: the dev choice {choice[key]!r} is not in its grid {value[CHOOSE]!r}")
        out[key] = choice[key]
    return out


def copy_run(source, target) -> None:
    """The chosen point's trained model (its model files and step log, not its working state) as the
    setting's own, hard-linked where the file system allows (a model is read, never written in place)."""
    from ehi.train.checkpoint import MODEL_FILES, link_model
    from ehi.train.step_log import STEP_LOG

    link_model(source, target, (*MODEL_FILES, STEP_LOG))
