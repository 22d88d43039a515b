"""Several datasets in one config (``datasets:``, workflow/multi.smk) and the sections that read them.

Each entry of ``datasets:`` overrides the shared keys for one dataset and runs as its own instance
of the pipeline; its complete config is :func:`dataset_configs`' entry. The sections over several
datasets (``gain``, ``world_calibration``, ``trained_benchmark``) are checked here, against the
datasets, before any job: each refusal is one line naming its key. The workflow only calls these.
"""

from __future__ import annotations

import copy
import os
import re

from ehi.core.catalog import dataset_results
from ehi.core.config_files import read_config_file
from ehi.core.errors import ConfigError
from ehi.core.dataset_source import name_dataset_sources


def merged(base: dict, override: dict) -> dict:
    """``base`` with ``override`` laid over it, key by key inside nested blocks."""
    out = copy.deepcopy(base)
    for key, value in override.items():
        nested = isinstance(value, dict) and isinstance(out.get(key), dict)
        out[key] = merged(out[key], value) if nested else copy.deepcopy(value)
    return out


def dataset_configs(config: dict) -> dict[str, dict]:
    """{dataset name: its complete config}: the shared keys with the entry's overrides laid over.
    Datasets named by their producer are read first (:func:`ehi.core.dataset_source.name_dataset_sources`)."""
    shared = {k: v for k, v in config.items() if k != "datasets"}
    out = {}
    for name, override in config["datasets"].items():
        override = override or {}
        given = override.get("dataset", {}).get("name", name)
        if given != name:
            raise ConfigError(f"config datasets.{name}.dataset.name is {given!r}; leave it out or make it {name!r}")
        out[name] = merged(shared, merged(override, {"dataset": {"name": name}}))
    return out


def rule_prefixes(names) -> dict[str, str]:
    """{dataset: prefix of its rule names}; rule names are identifiers, so other characters become _."""
    prefixes = {name: re.sub(r"\W", "_", name) + "__" for name in names}
    if len(set(prefixes.values())) < len(prefixes):
        raise ConfigError(f"config datasets: names {sorted(names)} clash once made rule names {sorted(prefixes.values())}")
    return prefixes


def gain_datasets(gain: dict, datasets: dict[str, dict]) -> dict[str, tuple[dict, bool]]:
    """{name: (its config, whether this config runs it)} of the gain table's datasets, in its order:
    gain.datasets (default every dataset of this config), then gain.other_datasets, each read from
    the config file that runs it. None without a ``gain.name``, which a section naming datasets needs."""
    if not gain.get("name"):
        if gain.get("datasets") or gain.get("other_datasets"):
            raise ConfigError("config gain: no name (the stem of its tables and figures, e.g. scale_gain)")
        return {}
    names = gain.get("datasets") or list(datasets)
    unknown = [n for n in names if n not in datasets]
    if unknown:
        raise ConfigError(f"config gain.datasets: {unknown} are not datasets of this config ({sorted(datasets)})")
    out = {n: (datasets[n], True) for n in names}
    for name, path in (gain.get("other_datasets") or {}).items():
        other = name_dataset_sources(read_config_file(path))  # as the Snakefile reads its own config
        runs = dataset_configs(other) if other.get("datasets") else {other.get("dataset", {}).get("name"): other}
        if name not in runs:
            raise ConfigError(f"config gain.other_datasets.{name}: {path} runs no dataset {name!r} ({sorted(runs)})")
        out[name] = (runs[name], False)
    return out


def check_gain_pairs(dataset_pairs: dict, gain_datasets: dict) -> None:
    """``gain.dataset_pairs`` names datasets of the gain table only, each with a tree and controls."""
    stray = sorted(set(dataset_pairs) - set(gain_datasets))
    if stray:
        raise ConfigError(f"config gain.dataset_pairs: {stray} are not datasets of the gain table ({list(gain_datasets)})")
    empty = sorted(d for d, trees in dataset_pairs.items() if not trees or not all(trees.values()))
    if empty:
        raise ConfigError(f"config gain.dataset_pairs: {empty} name no tree, or a tree without controls")


def calibration_target(calibration: dict, datasets) -> str | None:
    """Where the ``world_calibration`` section's target's results are: ``results/<target>`` for a
    dataset of this config (built by its rules), its absolute path for another config's (read as
    committed); None without the section. The schema's defaults fill an absent section with nulls,
    so only a section someone wrote is checked."""
    if not any(calibration.get(k) for k in ("name", "target", "grid")):
        return None
    if not (calibration.get("name") and calibration.get("target")):
        raise ConfigError("config world_calibration: needs a name (the table's stem) and a target (the dataset held to)")
    target = dataset_results(calibration["target"])
    return target if calibration["target"] in datasets else os.path.abspath(target)


def check_trained_benchmark(bench: dict, datasets, rows: dict[str, str] | None = None) -> dict[str, str]:
    """The ``trained_benchmark`` section names one of this config's datasets and at least one tree;
    returns its trees as ``{system: variant path}``. A tree is named as a variant system is, by
    ``main`` or an ablation row of the benchmark's dataset (``two_stage[0]``; ``rows``: {row name:
    variant path}, :func:`ehi.evaluate.variant_systems.row_names`; none: main alone)."""
    if bench.get("dataset") not in datasets:
        raise ConfigError(f"config trained_benchmark.dataset {bench.get('dataset')!r}: not one of this config's datasets "
                          f"({', '.join(datasets)})")
    if not bench.get("trees"):
        raise ConfigError("config trained_benchmark: no trees ({system: variant}, e.g. {ehi+tree: main})")
    rows = rows or {}
    unknown = {name: row for name, row in bench["trees"].items() if row != "main" and row not in rows}
    if unknown:
        raise ConfigError(f"config trained_benchmark.trees {unknown}: not main or an ablation row; "
                          f"known: {', '.join(['main', *rows])}")
    return {name: rows.get(row, row) for name, row in bench["trees"].items()}
