"""The whole config, section by section, as typed objects: the one source of every default.

Each section's dataclass lives with the stage that reads it (``TrainConfig`` in
:mod:`ehi.train.config`, ``SearchConfig`` in :mod:`ehi.search.config`, ``EvaluationConfig`` in
:mod:`ehi.evaluate.config`, ``SyntheticConfig`` in :mod:`ehi.data.synthetic`); the sections that
only the workflow reads are here. :data:`SECTIONS` maps each config key to its dataclass;
``tests/test_config_schema.py`` checks that workflow/schemas/config.schema.yaml (which Snakemake
validates against and fills defaults from) states the same keys, the same defaults and a
description for every key.

This module sits above every stage (it imports all of them): scripts and tests use it, the
package's stages never do.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ehi.core.config import Section
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
    dev_fraction: float = 0.0  # share of train queries moved to a seeded dev split
    dev_seed: int = 0
    synthetic: dict = field(default_factory=dict)  # SyntheticConfig's keys
    query_split: dict | None = None  # {fractions, seed}: split a single-split collection (ehi.data.query_split)
    train_queries: int | None = None  # a seeded sample of this many training queries (ehi.data.splits.subsample_train)

    def synthetic_config(self) -> SyntheticConfig:
        return SyntheticConfig.from_dict(self.synthetic)


@dataclass(frozen=True)
class EncoderConfig(Section):
    """``encoder:``: the shared query/document encoder (ehi.model.encoder.load_encoder)."""

    section = "encoder"

    name: str = "all-MiniLM-L6-v2"
    max_length: int = 128  # token limit of documents and queries
    batch_size: int = 128  # when embedding a corpus or a query set


@dataclass(frozen=True)
class TuningConfig(Section):
    """``tuning:``: the dev_tree_shape target (ehi.train.tree_shape.compare_shapes)."""

    section = "tuning"

    tree_shapes: list[list[int]] = field(default_factory=lambda: [[1, 32], [1, 64], [1, 128], [2, 8]])
    fraction: float = 0.1  # budget cap at which shapes are compared
    steps: int = 300  # L_indexing steps per shape and seed
    seeds: int = 3


@dataclass(frozen=True)
class ResourcesConfig(Section):
    """``resources:``: compute per job (no rerun trigger)."""

    section = "resources"

    threads_per_job: int = 1
    gpus_per_train: int = 0


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
# top-level keys that are not sections: their defaults
TOP_LEVEL = {"ablations": {}, "ablation_systems": ["ehi+tree", "ehi+exact"], "quick": False,
             "datasets": {},  # datasets: several datasets in one run (workflow/multi.smk)
             # folders the DAG makes for the datasets to read (workflow/rules/produced.smk)
             "collections": {}, "encodings": {}, "worlds": {}, "towers": {},
             # the tables across datasets (workflow/rules/gain.smk, ../multi.smk)
             "gain": {}, "world_fit": {}, "world_calibration": {},
             # one dataset's trained indexes at equal quality (workflow/rules/trained_benchmark.smk)
             "trained_benchmark": {}}


def sections_of(config: dict) -> dict:
    """Every section of a (validated) config as its dataclass; unknown keys fail loudly."""
    return {name: cls.from_dict({k: v for k, v in config.get(name, {}).items() if k not in WORKFLOW_ONLY.get(name, ())})
            for name, cls in SECTIONS.items()}
