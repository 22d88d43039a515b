"""The descriptions of the workflow's own keys (the tables across datasets, the folders the DAG
produces, the top-level values), in the schema's order, and the schema words their types cannot say.

Their types, defaults, ranges and choices are the classes' of :mod:`ehi.workflow_sections`;
``ehi.schema_file`` builds the schema from both.
"""

from __future__ import annotations

from ehi.core.schema_build import Doc, Keys
from ehi.schema_stage_keys import PATH_NAME, PRODUCED_NAME
from ehi.workflow_sections import (CollectionEntry, CompareCheckConfig, EncodingEntry, GainConfig, TopLevelValues,
                                   TowerEntry, TrainedBenchmarkConfig, WorldCalibrationConfig, WorldFitConfig)

COLLECTIONS_ENTRY_DOCS = {
    "script": "The build script (a Python file taking the output folder as its first argument).",
    "args": "Further arguments of the script.",
}

ENCODINGS_ENTRY_DOCS = {
    "collection": "The text collection's folder (a `collections` output, or any local copy).",
    "source": "Its layout, a dataset source with a local parser.",
    "encoder": "The encoder (an alias, a local folder or a hub id, as encoder.name).",
    "max_length": "Tokens a text is truncated to.",
    "batch_size": "Texts a forward pass of the encoder.",
}

TOWERS_ENTRY_DOCS = {
    "vectors": ("The embeddings folder the tower reads (a `worlds` or `encodings` output, or any local"
                " copy)."),
    "kind": Doc("linear (a d x d map started at the identity) or mlp (a residual MLP started at the identity).",
                typed=False),
    "shared": "One tower for queries and documents (false = one each, an asymmetric dual encoder).",
    "hidden": "The mlp's hidden width (0 = the vectors' width).",
}

GAIN_DOCS = {
    "name": Doc("The tables' and figures' file stem (null = no gain tables).", any_of=True,
                words={"pattern": PRODUCED_NAME}),
    "datasets": Doc("This config's datasets in the table, in its order (null = every one).", any_of=True,
                    words={"minItems": 1}),
    "other_datasets": ("Datasets another config runs, with their committed results: {dataset: that "
                       "config file} (its leaf count, seed and report names are read from it)."),
    "trees": Doc(("The tree systems whose gain is measured (report names: a search, or an "
              "evaluation.variant_systems name); the first is the one the _by_n table and figure "
              "follow."), words={"minItems": 1}),
    "controls": Doc(("The IVFs each tree is compared with, in order: first the tree's own control (k-means"
                 " IVF with as many lists, the search ivf-lists), then IVF tuned on its own (the _by_n"
                 " table reads the second where a dataset has no first)."), words={"minItems": 1}),
    "dataset_pairs": ("Per dataset, the trees read and each one's controls, {dataset: {tree: [controls]}}, "
                      "in place of trees x controls: for a dataset whose trees sit on different vectors "
                      "(the frozen MiniLM tower, DE's), each read against k-means lists on its own vectors"
                      " first; a report name such as ehi+tree may also mean the joint tree there."),
}

TRAINED_BENCHMARK_DOCS = {
    "dataset": Doc("The dataset of this config whose trained trees are timed (null = no benchmark).", any_of=True),
    "trees": ("The trees timed, {system name: setting}: in a one-dataset config main or an ablation "
              "row (as evaluation.variant_systems names one, e.g. {ehi-2stage+tree: two_stage[0]}); in"
              " a several-datasets config the variant folder, e.g. {ehi+tree: main}."),
    "lists_from_leaf_count": ("The peers' list counts are rule dev_leaf_count's grid (as "
                              "search.lists_from_leaf_count); false = the sqrt(N) grid."),
    "systems": Doc("Only these of the systems found (null = every tree and peer).", any_of=True,
                   words={"minItems": 1}),
    "hnsw_m": Doc("HNSW degrees tuned over on dev (null = 16 and 32).", any_of=True, words={"minItems": 1}),
    "max_frac": "A sweep stops past this fraction scored.",
    "rounds": "Interleaved timing rounds (the median is kept).",
    "threads": "Thread counts for batched QPS.",
    "budget_cost": Doc("The cost the peers' dev tuning reads (as search.budget_cost); null = documents.",
                       any_of=True, typed=False),
    "every_build": ("Measure each peer at every point of its grid (HNSW's hnsw_m, ScaNN's leaves and "
                    "reordering, IVF's and IVF-PQ's list counts), one curve a system, instead of the "
                    "point tuned on dev."),
    "note": ("A line for trained.md beside the machine line the benchmark writes itself (what ran "
             "beside it)."),
}

WORLD_FIT_DOCS = {
    "compare_with": ("Committed datasets (results/<name>/) set beside this config's in the world-fit "
                     "table."),
}

WORLD_CALIBRATION_DOCS = {
    "name": Doc("Stem of the table (results/tables/<name>.md and .csv); null = no calibration.", any_of=True,
                words={"pattern": "^[A-Za-z0-9_.-]+$"}),
    "target": ("The real collection (a dataset of this config, or a committed results/<name>/) whose "
               "geometry.json and main summary's exact search the worlds are held to."),
    "base": "World knobs every point shares (WorldConfig's names); the rest are its defaults.",
    "grid": Doc("World knobs to vary: {knob: [values]}; every combination is one world.",
                values={"minItems": 1}),
}

COMPARE_CHECK_DOCS = {
    "run": "The copied run's folder (its kmr.csv and run.json), committed under results/; null = no check.",
    "systems": Doc("The main-table systems compared (this study's names; the run names them alike).",
                   words={"minItems": 1}),
    "metric": "The metric compared, one of evaluation.metrics.",
    "targets": Doc("The budgets compared, fractions of work (documents scored plus routing).", words={"minItems": 1}),
}

COLLECTIONS = Keys((CollectionEntry,), COLLECTIONS_ENTRY_DOCS, (
    "Collections the DAG builds (rule build_collection, workflow/rules/produced.smk): {name: {script, args}}. "
    "`python SCRIPT resources/sources/<name> ARGS` writes a BEIR folder there, which `dataset.path` or an "
    "`encodings` entry then names."))
ENCODINGS = Keys((EncodingEntry,), ENCODINGS_ENTRY_DOCS, (
    "Text collections the DAG encodes once into vectors (rule encode_collection, "
    "ehi/model/encode_collection.py): {name: {collection, source, encoder, max_length, batch_size}} writes "
    "resources/vectors/<name>/ in the embeddings layout, which a dataset then reads with `dataset: {source: "
    "embeddings, path: resources/vectors/<name>}`."))
TOWERS = Keys((TowerEntry,), TOWERS_ENTRY_DOCS, (
    "Towers over precomputed vectors the DAG writes at their start (rule write_tower, ehi/model/tower.py): "
    "{name: {vectors, kind, shared, hidden}} writes resources/towers/<name>/tower.json, which `encoder.name` "
    "then names to train that tower."))
GAIN = Keys((GainConfig,), GAIN_DOCS, (
    "The tree's gain over k-means IVF at equal work across datasets (rules gain_table and gain_scaling, "
    "workflow/rules/gain.smk; several datasets only): results/tables/<name>.md (and _systems, _by_n) and "
    "results/figures/<name>.png, read from each dataset's per-query results and data facts "
    "(results/<dataset>/data.json). {} = none."))
TRAINED_BENCHMARK = Keys((TrainedBenchmarkConfig,), TRAINED_BENCHMARK_DOCS, (
    "One dataset's trained indexes at equal quality (rule trained_benchmark, "
    "workflow/rules/trained_benchmark.smk, benchmarks/trained.py): results/benchmarks/trained_<dataset>/, "
    "QPS and latency at equal nDCG@10, Recall@10 and k-NN recall@10. {} = none."))
WORLD_FIT = Keys((WorldFitConfig,), WORLD_FIT_DOCS, (
    "The world-fit table (rule world_fit, ehi/report/world_fit.py, several-datasets configs): this config's "
    "datasets beside the committed datasets named here, each read from its own results/<name>/geometry.json "
    "(rule geometry) and main summary."))
WORLD_CALIBRATION = Keys((WorldCalibrationConfig,), WORLD_CALIBRATION_DOCS, (
    "The world held to a real collection (rule world_calibration, ehi/report/world_calibration.py, "
    "several-datasets configs): one generated world a point of `grid` over the knobs of `base`, each "
    "measured on the facts rule geometry measures on `target` and ranked by its distance to them."))
COMPARE_CHECK = Keys((CompareCheckConfig,), COMPARE_CHECK_DOCS, (
    "A run of `ehi compare` on this study's own vectors held to the study (rule compare_check, "
    "ehi/report/compare_check.py): the run's KMR cells, copied with its command by "
    "benchmarks/record_compare.py, beside this study's seed means on the work axis, each within max(3 sd, "
    "0.005) or not."))

# the top-level keys that hold a value (TopLevelValues' fields)
VALUES = Keys((TopLevelValues,), {
    "ablations": Doc((
        "Ablations as named tables of rows; each row overrides train keys for EHI and becomes a "
        "Paramspace-style variant directory key~value/... . `snakemake ablation_<name>` runs one table."),
        values={"items": {"minProperties": 1}}),
    "ablation_systems": Doc("Systems searched for every ablation variant.",
                            items={"pattern": r"^(de|ehi)\+[a-z0-9][a-z0-9_-]*$"}),
    "datasets": Doc((
        "Several datasets in one run (workflow/multi.smk): {name: overrides}. Each entry is laid over the rest "
        "of this config, key by key inside nested blocks (its dataset block, train.height and train.branching, "
        "any other key), and runs as its own instance of the pipeline under resources/<name>/ and "
        "results/<name>/, sharing nothing but code; `tables` adds the cross-dataset table "
        "results/tables/across_<name>+<name>....md. Empty = the one dataset of the `dataset` block."),
        names={"description": ("A dataset name, as dataset.name (one path component of letters, digits, '_', "
                               "'.' and '-', at most 100 characters, never '.' or '..')."), "pattern": PATH_NAME},
        values={"description": ("This dataset's overrides of the shared keys (validated as a whole config once "
                                "laid over them).")}),
    "worlds": Doc((
        "Synthetic vector worlds the DAG generates (rule vector_world, ehi/data/vector_world.py): {name: "
        "{knob: value}} writes resources/worlds/<name>/ in the embeddings layout from those WorldConfig knobs "
        "(the rest at their defaults; an unknown knob is refused), which a dataset then reads with `dataset: "
        "{source: embeddings, path: resources/worlds/<name>}` and, as its identity tower, `encoder: {name: "
        "resources/worlds/<name>}`."),
        names={"pattern": PRODUCED_NAME},
        values={"description": "The world's WorldConfig knobs (n_docs, query_noise, asymmetry, n_train, seed, ...)."}),
    "quick": Doc((
        "Benchmarks only (target `benchmarks`): small sizes (synthetic N of 10^4 and 10^5, no 10^6, fewer "
        "repeats and training steps) so the whole target runs in under 10 minutes on 2 CPU cores. false = the "
        "full benchmark, with the 1M x 384 synthetic set. `--config quick=true` passes a string, so the words "
        "true/false are accepted too.")),
})
