"""The whole config, section by section, as typed objects: the one source of every default.

Each section's dataclass lives with the stage that reads it (``TrainConfig`` in
:mod:`ehi.train.config`, ``SearchConfig`` in :mod:`ehi.search.config`, ``EvaluationConfig`` in
:mod:`ehi.evaluate.config`, ``SyntheticConfig`` in :mod:`ehi.data.synthetic`); the sections that
only the workflow reads are here. :data:`SECTIONS` maps each config key to its dataclass, and
:data:`TOP_LEVEL` names every other top-level key with why no class reads it.
``tests/test_config_schema.py`` checks that workflow/schemas/config.schema.yaml (which Snakemake
validates against and fills defaults from) states the same keys, the same defaults, the same
ranges and choices field by field, and a description for every key.

This module sits above every stage (it imports all of them): scripts and tests use it, the
package's stages never do.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ehi.core.config import SEED_MAX, Section, bounded
from ehi.data.synthetic import SyntheticConfig
from ehi.evaluate.config import EvaluationConfig
from ehi.search.config import SearchConfig
from ehi.train.config import TrainConfig


@dataclass(frozen=True)
class DatasetConfig(Section):
    """``dataset:``: which dataset, from which source (ehi.data.prepare.prepare_dataset's keywords)."""

    section = "dataset"

    name: str = "synthetic"  # used in every output path
    source: str = "synthetic"  # synthetic, beir, or a name of ehi.data.sources.SOURCES
    path: str | None = None  # a local copy in the source's own layout (nothing is downloaded)
    cache_dir: str = "resources/downloads"
    dev_fraction: float = bounded(0.0, minimum=0, maximum=0.9)  # share of train queries moved to a seeded dev split
    dev_seed: int = bounded(0, minimum=0, maximum=SEED_MAX)
    synthetic: dict = field(default_factory=dict)  # SyntheticConfig's keys
    query_split: dict | None = None  # {fractions, seed}: split a single-split collection (ehi.data.query_split)
    train_queries: int | None = bounded(None, minimum=1)  # a seeded sample of this many training queries (ehi.data.splits.subsample_train)

    def synthetic_config(self) -> SyntheticConfig:
        return SyntheticConfig.from_dict(self.synthetic)


@dataclass(frozen=True)
class EncoderConfig(Section):
    """``encoder:``: the shared query/document encoder (ehi.model.encoder.load_encoder)."""

    section = "encoder"

    name: str = "all-MiniLM-L6-v2"
    max_length: int = bounded(128, minimum=8, maximum=512)  # token limit of documents and queries
    batch_size: int = bounded(128, minimum=1)  # when embedding a corpus or a query set


@dataclass(frozen=True)
class TuningConfig(Section):
    """``tuning:``: the dev_tree_shape target (ehi.train.tree_shape.compare_shapes)."""

    section = "tuning"

    tree_shapes: list[list[int]] = bounded(default_factory=lambda: [[1, 32], [1, 64], [1, 128], [2, 8]], minimum=1)
    fraction: float = bounded(0.1, exclusive_minimum=0, maximum=1)  # budget cap at which shapes are compared
    steps: int = bounded(300, minimum=1)  # L_indexing steps per shape and seed
    seeds: int = bounded(3, minimum=1)


@dataclass(frozen=True)
class ResourcesConfig(Section):
    """``resources:``: compute per job (no rerun trigger)."""

    section = "resources"

    threads_per_job: int = bounded(1, minimum=1)
    gpus_per_train: int = bounded(0, minimum=0)


SECTIONS: dict[str, type] = {
    "dataset": DatasetConfig, "encoder": EncoderConfig, "train": TrainConfig, "search": SearchConfig,
    "evaluation": EvaluationConfig, "tuning": TuningConfig, "resources": ResourcesConfig,
}
# TrainConfig fields the workflow sets itself (from encoder.max_length and the model), not train keys
WORKFLOW_SET = {"train": {"max_length", "use_tree", "encode_batch_size", "device"}}
# train keys the workflow reads itself and no training does (which seed replicas exist, ehi.evaluate.seeds)
WORKFLOW_ONLY = {"train": {"seeds"}}
# keys read as others before the schema fills defaults (ehi.core.dataset_source: dataset.world and
# dataset.encoding become source and path): never in a validated config, so they have no default
RESOLVED_BEFORE_SCHEMA = {"dataset": {"world", "encoding"}}
# The top-level keys with no Section class, {key: (its default, why it has none)}: each is a value
# or a map of entries that only the workflow reads, never one section a stage builds.
TOP_LEVEL = {
    "ablations": ({}, "{table: rows}: each row train keys, checked against the train schema (ehi.config_checks)"),
    "ablation_systems": (["ehi+tree", "ehi+exact"], "a list of system names, checked as search.systems are"),
    "quick": (False, "one flag of the benchmarks target (workflow/rules/benchmarks.smk)"),
    "datasets": ({}, "{name: overrides}: each laid over this config and checked as a whole one (workflow/multi.smk)"),
    "collections": ({}, "{name: build script}: folders the DAG makes (workflow/rules/produced.smk)"),
    "encodings": ({}, "{name: encoder run}: vectors the DAG makes (workflow/rules/produced.smk)"),
    "worlds": ({}, "{name: knobs}: each entry a WorldConfig, checked by ehi.data.produced.check_worlds"),
    "towers": ({}, "{name: tower}: towers the DAG writes (workflow/rules/produced.smk)"),
    "gain": ({}, "the tables across datasets (workflow/rules/gain.smk)"),
    "world_fit": ({}, "the world-fit table across datasets (workflow/multi.smk)"),
    "world_calibration": ({}, "the world-calibration grid across datasets (workflow/multi.smk)"),
    "trained_benchmark": ({}, "one dataset's trained indexes timed (workflow/rules/trained_benchmark.smk)"),
    "compare_check": ({}, "a run of ehi compare held to this study (rule compare_check, ehi/report/compare_check.py)"),
}


def sections_of(config: dict) -> dict:
    """Every section of a (validated) config as its dataclass; unknown keys fail loudly."""
    return {name: cls.from_dict({k: v for k, v in config.get(name, {}).items() if k not in WORKFLOW_ONLY.get(name, ())})
            for name, cls in SECTIONS.items()}
