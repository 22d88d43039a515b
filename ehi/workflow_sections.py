"""The config blocks only the workflow reads, as typed declarations: the tables across datasets, the
folders the DAG produces, and the top-level keys that hold a value rather than a block.

Each is the type, default, range and choices of its keys, from which ``ehi.schema_file`` writes
the config's JSON schema; the rules read these blocks from the validated config (the Snakefile's
checks in :mod:`ehi.config_checks` and :mod:`ehi.data.produced`), so the classes are the schema's
source rather than objects a stage builds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ehi.core.config import Section, bounded

BUDGET_COSTS = ("documents", "work")


@dataclass(frozen=True)
class CollectionEntry(Section):
    """One ``collections:`` entry: a build script that writes a BEIR folder (rule build_collection)."""

    section = "collections entry"

    script: str
    args: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class EncodingEntry(Section):
    """One ``encodings:`` entry: a text collection encoded once into vectors (rule encode_collection)."""

    section = "encodings entry"

    collection: str
    source: str = "beir"
    encoder: str = "all-MiniLM-L6-v2"
    max_length: int = bounded(256, minimum=1)
    batch_size: int = bounded(128, minimum=1)


@dataclass(frozen=True)
class TowerEntry(Section):
    """One ``towers:`` entry: a tower over precomputed vectors (rule write_tower, ehi.model.tower)."""

    section = "towers entry"

    vectors: str
    kind: str = bounded("linear", choices=("linear", "mlp"))
    shared: bool = True  # false: one tower for queries, one for documents
    hidden: int = bounded(0, minimum=0)  # the mlp's hidden width; 0: the vectors' width


@dataclass(frozen=True)
class GainConfig(Section):
    """``gain:``: the tree's gain over k-means IVF at equal work across datasets (workflow/rules/gain.smk)."""

    section = "gain"

    name: str | None = None  # None: no gain tables
    datasets: list[str] | None = None  # None: every dataset of the config
    other_datasets: dict[str, str] = field(default_factory=dict)  # {dataset: the config file that runs it}
    trees: list[str] = field(default_factory=lambda: ["ehi-floor+tree", "ehi+tree"])
    controls: list[str] = field(default_factory=lambda: ["pre+ivf-lists", "ehi+faiss-ivf"])
    # {dataset: {tree: its controls}}: a dataset whose trees sit on other vectors than one another
    dataset_pairs: dict[str, dict[str, list[str]]] = field(default_factory=dict)


@dataclass(frozen=True)
class TrainedBenchmarkConfig(Section):
    """``trained_benchmark:``: one dataset's trained indexes timed at equal quality (benchmarks/trained.py)."""

    section = "trained_benchmark"

    dataset: str | None = None  # None: no benchmark
    trees: dict[str, str] = field(default_factory=dict)  # {system name: setting}
    lists_from_leaf_count: bool = False
    systems: list[str] | None = None  # None: every tree and peer
    hnsw_m: list[int] | None = bounded(None, minimum=2)  # None: 16 and 32
    max_frac: float = bounded(1.0, exclusive_minimum=0, maximum=1)
    rounds: int = bounded(3, minimum=1)
    threads: list[int] = bounded(default_factory=lambda: [1], minimum=1)
    budget_cost: str | None = bounded(None, choices=BUDGET_COSTS)  # None: documents
    every_build: bool = False
    note: str = ""


@dataclass(frozen=True)
class WorldFitConfig(Section):
    """``world_fit:``: the committed datasets set beside this config's in the world-fit table."""

    section = "world_fit"

    compare_with: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class WorldCalibrationConfig(Section):
    """``world_calibration:``: generated worlds held to a real collection (ehi.report.world_calibration)."""

    section = "world_calibration"

    name: str | None = None  # None: no calibration
    target: str | None = None
    base: dict = field(default_factory=dict)  # WorldConfig knobs every point shares
    grid: dict[str, list] = field(default_factory=dict)  # {knob: [values]}


@dataclass(frozen=True)
class CompareCheckConfig(Section):
    """``compare_check:``: a run of ``ehi compare`` on the study's own vectors held to the study
    (ehi.report.compare_check)."""

    section = "compare_check"

    run: str | None = None  # the copied run's folder; None: no check
    systems: list[str] = field(default_factory=lambda: ["de+faiss-ivf", "de+scann", "de+faiss-hnsw", "ehi-2stage+tree"])
    metric: str = "ndcg@10"
    targets: list[float] = bounded(default_factory=lambda: [0.01, 0.02, 0.05, 0.1], exclusive_minimum=0, maximum=1)


# the words quick takes: `--config quick=true` passes a string
QUICK_WORDS = (True, False, "true", "false", "True", "False")


@dataclass(frozen=True)
class TopLevelValues(Section):
    """The top-level keys that hold a value or a map of free entries rather than a block: each entry
    of ``datasets`` is laid over the config and checked as a whole one (workflow/multi.smk), each
    ``worlds`` entry is a WorldConfig (ehi.data.produced.check_worlds), each ablation row train keys
    (ehi.config_checks), so the schema checks their shape only."""

    section = "config"

    ablations: dict[str, list[dict[str, float | int | bool | str]]] = field(default_factory=dict)
    ablation_systems: list[str] = field(default_factory=lambda: ["ehi+tree", "ehi+exact"])
    datasets: dict[str, dict] = field(default_factory=dict)
    worlds: dict[str, dict] = field(default_factory=dict)
    quick: bool | str = bounded(False, choices=QUICK_WORDS)
