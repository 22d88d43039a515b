"""Checks of a whole pipeline config that its JSON schema cannot express, run while the Snakefile
is parsed, so that ``snakemake -n`` refuses a config that would otherwise fail in a job hours
later, after training. Each problem is a :class:`ConfigError` naming the key.

The schema checks each key alone, and the form of a name only. These check names against the
registries (dataset sources, searches; plugins included, so that a plugin's name needs no schema
edit) and keys against each other and against what is known before any job runs. Each training's
settings (the main setting, every ablation row, every point of a dev grid) are built as the training
builds them (:func:`check_train`: ``TrainConfig``'s ranges, L_siamese registry and rules between
keys, written there once); then the tree's B^H leaves of each of those, the synthetic
generator's corpus size and split shares, which qrels files a local BEIR copy has, and the
queries per split of an already prepared dataset (its manifest). Where a fact is not known at
parse time (a download not fetched yet) the check is left to the job.

At the package root because it reads the registries of several stages, and kept light on purpose
(the Snakefile imports it on every parse): the registries' name-only tables
(:mod:`ehi.data.sources`, :mod:`ehi.train.losses.names`, :mod:`ehi.search.registry`: their parsers,
losses and searchers are named, not imported), no torch, no pandas.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import yaml

from ehi.core.errors import ConfigError
from ehi.core.metric_names import METRIC_NAMES, NEEDS_CUTOFF, depth_fault, metric_fault  # noqa: F401 (re-exported)
from ehi.core.schemas import SPLITS
from ehi.data.sources import IR_DATASETS_PREFIX, SOURCES, find_source, source_names
from ehi.model.tower_checks import check_tower
from ehi.evaluate.roles import is_tree, search_of
from ehi.search.registry import ann_kind, searches
from ehi.vector_checks import check_pre_baselines, check_trainable_encoder, check_vector_encoder



def check_config(config: dict, schema_path: str | os.PathLike, data_dir: str | os.PathLike | None = None,
                 metric_families=(), grid: dict | None = None) -> None:
    """Every check below; ``config`` is already validated against (and filled from) the schema,
    ``data_dir`` is where the dataset is (or will be) prepared, ``metric_families`` the registered
    metric families beyond ranx's (ehi.evaluate.metric_registry.families: plugins included; passed
    in because that registry imports pandas), ``grid`` the train keys chosen on dev ({key: values},
    :func:`ehi.train.grid.take_grid`: ``config`` holds their first values), every value checked."""
    train_schema = yaml.safe_load(Path(schema_path).read_text())["properties"]["train"]
    check_source(config["dataset"])
    check_vector_encoder(config)
    check_tower(config["encoder"]["name"], config["dataset"], config.get("towers"))
    check_metrics(config["evaluation"]["metrics"], metric_families, config["search"]["k"])
    trains = variant_trains(config, train_schema, grid)
    check_trainable_encoder(config, trains)
    check_pre_baselines(config, trains)
    n_docs = known_corpus_size(config["dataset"], data_dir)
    for where, train in trains.items():
        check_seeds(where, train)
        check_tree(config, where, train, n_docs)
    check_splits(config, known_splits(config["dataset"], data_dir), trains)
    if config["search"].get("lists_from_leaf_count") and config["search"].get("scann_leaves") is not None:
        raise ConfigError("config search.scann_leaves: with search.lists_from_leaf_count every list count comes from "
                          "rule dev_leaf_count's grid (whose base is search.ivf_nlist); leave scann_leaves unset")
    if config["evaluation"].get("budget_axis") == "work" and config["search"].get("budget_cost") != "work":
        raise ConfigError("config evaluation.budget_axis: work reads each query's routing, which only "
                          "search.budget_cost: work records; set both")


def check_source(dataset: dict) -> None:
    """A registered source (or ir_datasets:<id>); one that downloads nothing needs the local copy it reads."""
    source = dataset["source"]
    if source.startswith(IR_DATASETS_PREFIX):
        return  # the ir_datasets package knows its ids; preparation names an unknown one
    if source not in source_names():
        raise ConfigError(f"config dataset.source: unknown source {source!r}; known: {', '.join(source_names())}, "
                          f"or {IR_DATASETS_PREFIX}<id>")
    if find_source(source) is not None and not find_source(source).downloads and not dataset.get("path"):
        downloading = [name for name in SOURCES if SOURCES[name].downloads]
        raise ConfigError(f"config dataset.path: source {source!r} reads a local copy and downloads nothing; set "
                          f"dataset.path to it, or name a source that downloads ({', '.join(downloading)}, or "
                          f"{IR_DATASETS_PREFIX}<id>)")


def check_seeds(where: str, train: dict) -> None:
    """``train.seed`` is one of ``train.seeds`` when both are set: its run is the variant itself and
    each other seed a replica, so a seed left out of the list would be trained and averaged in
    without being listed."""
    seeds = train.get("seeds")
    if seeds and train["seed"] not in seeds:
        raise ConfigError(f"config {where}.seed: {train['seed']} is not in {where}.seeds {seeds}; the runs are "
                          f"train.seed's plus one per other listed seed, so list it (e.g. {[train['seed'], *seeds]}) "
                          "or set train.seed to one of them")


def check_metrics(metrics: list[str], extra_families=(), k: int | None = None) -> None:
    """Every name known and well formed; then, with ``k`` (``search.k``), no cutoff above the
    depth the searches rank to."""
    faults = (f"evaluation.metrics: {fault}" for name in metrics if (fault := metric_fault(name, extra_families)))
    fault = next(faults, None) or (depth_fault(metrics, k) if k is not None else None)
    if fault:
        raise ConfigError(f"config {fault}")


def variant_trains(config: dict, train_schema: dict, grid: dict | None = None) -> dict[str, dict]:
    """The train section of the main setting, of every ablation row (the row over it) and of every
    point of the dev grid in each (``grid``: {key: its values}, :func:`ehi.train.grid.take_grid`;
    a row's own keys are not gridded in it), each checked as its training will read it
    (:func:`check_train`): {config key of the row, and the grid point where not the first: train dict}."""
    from jsonschema import Draft202012Validator

    from ehi.train.grid import combinations

    validator = Draft202012Validator(train_schema)
    settings = {"train": ((), dict(config["train"]))}
    for name, rows in config["ablations"].items():
        settings.update({f"ablations.{name}[{i}]": (tuple(row), {**config["train"], **row}) for i, row in enumerate(rows)})
    trains = {}
    for where, (fixed, train) in settings.items():
        for point in combinations({k: v for k, v in (grid or {}).items() if k not in fixed}):
            at = where if all(train[k] == v for k, v in point.items()) else \
                f"{where} (grid point {', '.join(f'{k}={v!r}' for k, v in point.items())})"
            trains[at] = check_train(at, {**train, **point}, validator)
    return trains


def check_train(where: str, train: dict, validator) -> dict:
    """``train`` (the settings one training reads: ``where``, its config key) against the schema's
    train section (``validator``), then built as the training builds it
    (:class:`ehi.train.config.TrainConfig`: every range, NaN, and each rule between keys, written
    there once); returned as it is."""
    from dataclasses import fields

    from ehi.train.config import TrainConfig

    fault = next((f"{where}{''.join('.' + str(p) for p in err.path)}: {err.message}"
                  for err in sorted(validator.iter_errors(train), key=lambda e: list(e.path))), None)
    if fault is None:
        # the keys a training reads (not seeds: which replicas exist); branching: auto is rule
        # dev_leaf_count's choice, an integer once the training reads it
        known = {f.name for f in fields(TrainConfig)}
        read = {k: v for k, v in train.items() if k in known and not (k == "branching" and v == "auto")}
        try:
            TrainConfig.from_dict(read)
        except ConfigError as err:
            fault = f"{where}: {str(err).removeprefix(TrainConfig.section + ': ').removeprefix(TrainConfig.section + ' ')}"
    if fault:
        raise ConfigError(f"config {fault}")
    return train


def _searches_tree(config: dict, where: str) -> bool:
    """Whether a system of the variant sweeps the tree's beams (a kind that reads search.ehi_beams)."""
    systems = config["search"]["systems"] if where == "train" else config["ablation_systems"]
    return any("ehi_beams" in ann_kind(s.split("+", 1)[1]).settings_keys for s in systems if "+" in s)


def _trains_ehi(config: dict, where: str) -> bool:
    systems = config["search"]["systems"] if where == "train" else config["ablation_systems"]
    return any(s.startswith("ehi+") for s in systems)


def check_tree(config: dict, where: str, train: dict, n_docs: int | None) -> None:
    """The tree of one variant (``where``: its config key) against the beams and the corpus."""
    if not _trains_ehi(config, where):
        return
    height, branching = train["height"], train["branching"]
    if branching == "auto":  # chosen on dev by rule dev_leaf_count, for a one-level tree
        if height != 1:
            raise ConfigError(f"config {where}.branching=auto chooses a one-level tree's leaf count; set {where}.height=1")
        return
    n_leaves = branching**height
    shape = f"{where}.height={height}, {where}.branching={branching}: {n_leaves} leaves"
    if n_docs is not None and n_leaves > n_docs:
        raise ConfigError(f"config {shape}, more than the corpus's {n_docs} documents; lower height or branching")
    too_wide = sorted(b for b in config["search"]["ehi_beams"] or [] if b > n_leaves)
    if too_wide and _searches_tree(config, where):
        raise ConfigError(f"config search.ehi_beams: {too_wide} exceed the tree's leaves ({shape}); a beam is 1..B^H")
    beam = train.get("diagnostic_beam")
    if beam is not None and beam > n_leaves and train.get("diagnostics", True):
        raise ConfigError(f"config {where}.diagnostic_beam: {beam} exceeds the tree's leaves ({shape})")


def recorded_config(dataset: dict) -> dict:
    """The dataset config as ``prepare_data`` records it in the manifest: ``query_split`` and
    ``train_queries`` only when set (the rule's params leave them out unset, so that configs
    without them keep their jobs)."""
    return {key: value for key, value in dataset.items() if key not in ("query_split", "train_queries") or value}


def _manifest(dataset: dict, data_dir) -> dict | None:
    """The prepared dataset's manifest, if it was prepared from this very dataset config."""
    path = Path(data_dir) / "manifest.json" if data_dir else None
    if path is None or not path.is_file():
        return None
    try:
        manifest = json.loads(path.read_text())
    except (OSError, ValueError):
        return None  # check_manifest names a broken manifest
    if not isinstance(manifest, dict) or not isinstance(manifest.get("config"), dict):
        return None
    return manifest if recorded_config(manifest["config"]) == recorded_config(dataset) else None


def known_corpus_size(dataset: dict, data_dir=None) -> int | None:
    """Documents in the corpus, where known before preparation (synthetic) or prepared already."""
    if dataset["source"] == "synthetic":
        return int(dataset.get("synthetic", {}).get("n_docs", 0)) or None
    corpus = Path(data_dir) / "corpus.parquet" if data_dir else None
    if corpus is not None and corpus.is_file() and _manifest(dataset, data_dir) is not None:
        import pyarrow.parquet as pq

        return pq.read_metadata(corpus).num_rows
    return None


def known_splits(dataset: dict, data_dir=None) -> tuple[dict[str, bool], str] | None:
    """({split: has queries}, where that is known from), or None where it is not known yet."""
    manifest = _manifest(dataset, data_dir)
    if manifest is not None:
        counts = manifest.get("queries_per_split", {})
        return {s: counts.get(s, 0) > 0 for s in SPLITS}, f"the prepared dataset ({Path(data_dir) / 'manifest.json'})"
    if dataset.get("query_split"):
        return None  # splits drawn from the judged queries at preparation
    if dataset["source"] == "synthetic":
        synthetic = dataset.get("synthetic", {})
        n, shares = synthetic.get("n_queries", 0), synthetic.get("split_fractions", [])
        if not n or len(shares) != len(SPLITS) or sum(shares) <= 0:
            return None
        # the generator's rounding (ehi.data.synthetic._splits): floors, the rest goes to train
        has = {s: math.floor(f / sum(shares) * n) > 0 for s, f in zip(SPLITS, shares)}
        has["train"] = True
        found, where = has, "dataset.synthetic.split_fractions"
    elif (source := find_source(dataset["source"])) is not None and source.beir_layout and dataset.get("path"):
        qrels = Path(dataset["path"]).expanduser() / "qrels"
        if not qrels.is_dir():
            return None  # preparation names the missing directory
        found, where = {s: (qrels / f"{s}.tsv").is_file() for s in SPLITS}, f"the qrels files in {qrels}"
    else:
        return None
    if dataset.get("dev_fraction", 0) > 0 and found["dev"]:  # preparation refuses to mix carved and shipped dev queries
        raise ConfigError(f"config dataset.dev_fraction: {dataset['dev_fraction']}, but dataset {dataset.get('name')!r} "
                          f"ships a 'dev' split ({where}): set dataset.dev_fraction to 0 to use it")
    if dataset.get("dev_fraction", 0) > 0 and found["train"]:
        found = {**found, "dev": True}  # carved from train at preparation
    return found, where


def untuned_searches() -> tuple[str, ...]:
    """The searches that tune nothing on search.tune_split: EHI's trees and the untuned ANNS kinds (exact)."""
    return tuple(name for name in searches() if not ann_kind(name).tuned)


def check_splits(config: dict, known: tuple[dict[str, bool], str] | None, trains: dict[str, dict]) -> None:
    """Evaluated, tuning, training and dev-evaluation splits: valid names, tuning never on the
    evaluated split, and each needed split present where that is known."""
    evaluated, tune = config["evaluation"]["split"], config["search"]["tune_split"]
    systems = [*config["search"]["systems"], *(config["ablation_systems"] if config["ablations"] else [])]
    tuned = [s for s in systems if s.split("+", 1)[1] not in untuned_searches()]
    needed = {"evaluation.split": evaluated}  # config key -> the split it needs
    if tuned:
        needed["search.tune_split"] = tune
    if any(not s.startswith("pre+") for s in systems):  # DE and EHI train on the train split
        needed["search.systems"] = "train"
    elif any(m.startswith("psp@") for m in config["evaluation"]["metrics"]):  # propensities from train labels
        needed["evaluation.metrics"] = "train"
    needed.update({f"{where}.dev_eval": "dev" for where, train in trains.items() if train.get("dev_eval")})
    for key, split in needed.items():
        if split not in SPLITS:
            raise ConfigError(f"config {key}: unknown split {split!r}; expected one of {', '.join(SPLITS)}")
    if tuned and tune == evaluated:
        raise ConfigError(f"config search.tune_split: {tune!r} is also evaluation.split; {', '.join(tuned)} would be "
                          f"tuned on the queries they are evaluated on: tune on another split (e.g. {'train' if tune == 'dev' else 'dev'})")
    if known is None:
        return
    has, source = known
    for key, split in needed.items():
        if not has[split]:
            hint = " (set dataset.dev_fraction to carve one out of train)" if split == "dev" else ""
            present = ", ".join(s for s in SPLITS if has[s]) or "none"
            raise ConfigError(f"config {key}: dataset {config['dataset']['name']!r} has no {split!r} queries according to "
                              f"{source} (splits with queries: {present}){hint}")


def check_tree_names(trees: dict) -> None:
    """Every name a tree system, ``{encoder}+{search}`` whose search the registry marks as EHI's
    tree (:func:`ehi.evaluate.roles.is_tree`): the benchmark searches a name's index by its search
    half, so ``de+exact`` would be timed as DE's exact search, and no tree would be."""
    kinds = searches()
    trees_known = [kind for kind in kinds if is_tree(f"ehi+{kind}")]
    bad = [name for name in trees if "+" not in name or search_of(name) not in kinds or not is_tree(name)]
    if bad:
        raise ConfigError(f"config trained_benchmark.trees: {', '.join(map(repr, bad))}: not a tree system (a tree is "
                          f"<label>+<tree search>, the search one of {', '.join(trees_known)}, e.g. ehi+tree)")
