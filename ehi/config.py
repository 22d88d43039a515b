"""The whole config, section by section, as typed objects: the one source of every default.

Each section's dataclass lives with the stage that reads it (``TrainConfig`` in
:mod:`ehi.train.config`, ``SearchConfig`` in :mod:`ehi.search.config`, ``EvaluationConfig`` in
:mod:`ehi.evaluate.config`, ``SyntheticConfig`` in :mod:`ehi.data.synthetic`); the sections that
only the workflow reads are here and in :mod:`ehi.workflow_sections`. :data:`SECTIONS` maps each
block of the config to its dataclass, :data:`ENTRIES` each map of named entries to one entry's, and
:data:`TOP_LEVEL` types the keys that hold a value. workflow/schemas/config.schema.yaml (which
Snakemake validates against and fills defaults from) is generated from these classes by
``python -m ehi.schema_file``; ``tests/test_config_schema.py`` checks that it is current.

This module sits above every stage (it imports all of them): scripts and tests use it, the
package's stages never do.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from ehi.core.config import SEED_MAX, Section, bounded
from ehi.data.synthetic import SyntheticConfig
from ehi.evaluate.config import EvaluationConfig
from ehi.search.config import SearchConfig
from ehi.train.config import TrainConfig
from ehi.workflow_sections import (CollectionEntry, CompareCheckConfig, EncodingEntry, GainConfig, TopLevelValues,
                                   TowerEntry, TrainedBenchmarkConfig, WorldCalibrationConfig, WorldFitConfig)


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


@dataclass(frozen=True)
class ProducedDataset(Section):
    """``dataset.world``, ``dataset.encoding`` and ``dataset.collection``: a dataset named by the producer of its folder, read
    as ``source`` and ``path`` before the schema fills defaults (ehi.core.dataset_source), so they
    have no default."""

    section = "dataset"

    world: str
    encoding: str
    collection: str


@dataclass(frozen=True)
class ProducedEncoder(Section):
    """``encoder.tower``: an encoder named by the ``towers`` entry that writes its folder, read as
    ``encoder.name`` before the schema fills defaults (ehi.core.dataset_source), so it has no default."""

    section = "encoder"

    tower: str


@dataclass(frozen=True)
class QuerySplitConfig(Section):
    """``dataset.query_split``: a seeded train/dev/test split of a single-split collection's judged
    queries (ehi.data.query_split)."""

    section = "dataset.query_split"

    fractions: tuple[float, float, float] = bounded((0.5, 0.1, 0.4), minimum=0, maximum=1)
    seed: int = bounded(0, minimum=0, maximum=SEED_MAX)


@dataclass(frozen=True)
class TrainSeeds(Section):
    """``train.seeds``: the seed replicas the workflow trains (ehi.evaluate.seeds); no training reads it."""

    section = "train"

    seeds: list[int] | None = bounded(None, minimum=0, maximum=SEED_MAX)


SECTIONS: dict[str, type] = {
    "dataset": DatasetConfig, "encoder": EncoderConfig, "train": TrainConfig, "search": SearchConfig,
    "evaluation": EvaluationConfig, "tuning": TuningConfig, "resources": ResourcesConfig, "gain": GainConfig,
    "trained_benchmark": TrainedBenchmarkConfig, "world_fit": WorldFitConfig, "world_calibration": WorldCalibrationConfig,
    "compare_check": CompareCheckConfig,
}
# the top-level maps of named entries, {key: the class of one entry}
ENTRIES: dict[str, type] = {"collections": CollectionEntry, "encodings": EncodingEntry, "towers": TowerEntry}
# TrainConfig fields the workflow sets itself (from encoder.max_length and the model), not train keys
WORKFLOW_SET = {"train": {"max_length", "use_tree", "encode_batch_size", "device"}}
# train keys the workflow reads itself and no training does (which seed replicas exist, ehi.evaluate.seeds)
WORKFLOW_ONLY = {"train": {f.name for f in fields(TrainSeeds)}}
# keys read as others before the schema fills defaults (ehi.core.dataset_source: dataset.world,
# dataset.encoding and dataset.collection become source and path, encoder.tower encoder.name):
# never in a validated config, so they have no default
RESOLVED_BEFORE_SCHEMA = {"dataset": {f.name for f in fields(ProducedDataset)},
                          "encoder": {f.name for f in fields(ProducedEncoder)}}
# The other top-level keys hold a value, or a map of entries the workflow checks as a whole config,
# a WorldConfig or train keys: ehi.workflow_sections.TopLevelValues types them.
TOP_LEVEL = TopLevelValues


def sections_of(config: dict) -> dict:
    """Every section of a (validated) config as its dataclass; unknown keys fail loudly."""
    return {name: cls.from_dict({k: v for k, v in config.get(name, {}).items() if k not in WORKFLOW_ONLY.get(name, ())})
            for name, cls in SECTIONS.items()}
