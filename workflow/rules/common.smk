# Helpers shared by the stage files (the settings a config declares, and what each trains with, are
# settings.smk's); kept small, since anything that grows belongs in `ehi`.
import os
import re
from pathlib import Path

from ehi.core.catalog import dataset_logs, dataset_properties, dataset_resources, dataset_results
from ehi.core.versions import STAGES, upstream_versions
from ehi.core.fingerprint import encoder_identity
from ehi.config_checks import check_config, known_corpus_size
from ehi.core.config_values import check_values
from ehi.evaluate.metric_registry import families as metric_families
from ehi.core.errors import exit_on_user_error
from ehi.data.manifest import check_manifest
from ehi.data.produced import produced_folders, produced_inputs
from ehi.vector_checks import check_vectors_folder
from ehi.core.config import canonical
from ehi.search.grids import tree_leaf_count
from ehi.search.factory_kinds import check_factories
from ehi.search.registry import ann_kind, rule_settings
from ehi.core.unfinished import date_back, outdate_unfinished
from ehi.report.report_files import untested_ablation_variants

include: "targets.smk"


DS = config["dataset"]["name"]
R = dataset_resources(DS)  # heavy artefacts (git-ignored)
RES = dataset_results(DS)  # small cached results (committed)
LOGS = dataset_logs(DS)  # job logs and Snakemake benchmark timings (git-ignored: they change every run)
# A job with update() outputs that failed (their backups restored, the job recorded as made) left
# its marker beside its log: its outputs are dated back, so this run does the job again
# (ehi/core/unfinished.py); the files keep their bytes
outdate_unfinished(LOGS)
DATA_DIR = f"{R}/data"
LEAF_COUNT = f"{RES}/dev_leaf_count.json"  # train.branching: auto (rule dev_leaf_count)
DATA_FILES = expand(f"{DATA_DIR}/{{kind}}.parquet", kind=["corpus", "queries", "qrels"])
# requested by the named targets (not by each rule, whose recorded inputs would change): deleting
# it, as a changed-data error advises, prepares the dataset again and reruns everything after it
DATA_MANIFEST = f"{DATA_DIR}/manifest.json"
# `snakemake tables` (and/or `claims`) alone, where cached results exist, re-renders from them as they are: its
# inputs are then given as absolute paths, which no rule's output matches, so nothing upstream
# (whose heavy inputs a fresh clone lacks) is scheduled. Otherwise the report waits for the pipeline
# and is rendered again whenever a result it reads was (an `ancient()` input here once left the
# committed tables stale after `snakemake all` had regenerated every result under them).
REPORT_ONLY = report_only(os.path.exists(f"{RES}/significance.parquet"))
# Refused while parsing, before any job (dry runs included), each naming its key or file: what the
# schema cannot check (keys against each other and against the data), and a dataset whose source
# copy or prepared tables changed since preparation (ehi/data/manifest.py)
with exit_on_user_error("snakemake"):
    check_manifest(DATA_DIR)  # first: check_config reads the prepared dataset's size and splits from it
    check_config(config, os.path.join(workflow.basedir, "workflow", "schemas", "config.schema.yaml"), DATA_DIR,
                 metric_families(), TRAIN_GRID)
    # values against facts the schema cannot see: the encoder, its dimension, the corpus size, the
    # FAISS factory strings built over that dimension (a report-only run reads none of them: a fresh
    # clone re-renders committed results without them)
    if not REPORT_ONLY:
        check_vectors_folder(config["dataset"], produced_folders(config))  # before its tower's name is read
        dim = check_values(config, lambda system: rule_settings(config["search"], system),
                           known_corpus_size(config["dataset"], DATA_DIR), produced_folders(config))
        check_factories(config["search"]["faiss_factories"], dim)
# The conda environment every rule runs in (pip users already have it through pyproject.toml).
ENV = "../envs/ehi.yaml"

# Implementation versions: Snakemake cannot see code changes inside `ehi/`. Bump a stage's number
# in ehi/core/versions.py when its code changes results. VERSIONS[stage] is a rule's `version`
# param: the numbers of that stage and of every stage before it, so a bump reruns the stage and
# everything downstream of it, and exactly the results whose stamped versions it makes stale
# (ehi.core.staleness).
VERSIONS = {stage: upstream_versions(stage) for stage in STAGES}

# The encoder as a param of the jobs that start from it (embed, the trainings): a local folder
# enters with a digest of its files (ehi.core.fingerprint), so naming another folder, or changing
# the one named, reruns them; a built-in alias or hub id enters as its name, as before. A folder
# the DAG writes itself (workflow/rules/produced.smk) enters as its name: it may not exist yet when
# this parses, and a rewrite of it reaches these jobs through the preparation that reads it.
_ENCODER = config["encoder"]["name"]
_ENCODER_ID = _ENCODER if os.path.normpath(_ENCODER) in produced_folders(config) else encoder_identity(_ENCODER)
ENCODER_ID = {"encoder_id": _ENCODER_ID} if _ENCODER_ID != _ENCODER else {}


def evaluation_settings(*keys):
    """The evaluation keys a rule reads, keys sorted (ehi.evaluate.config.EvaluationConfig)."""
    return canonical({key: config["evaluation"][key] for key in keys})


# The report keys set away from their defaults (evaluation.budget_axis, noise_notes): a rule gets
# them only then, so a config without them keeps its params and its results stay made
REPORT_OPTIONS = {key: config["evaluation"][key] for key, default in (("budget_axis", "documents"), ("noise_notes", False))
                  if config["evaluation"][key] != default}


def search_settings(wildcards):
    """The search keys one system reads (ehi.search.registry.rule_settings): `hnsw_M` reruns HNSW only.
    A search whose lists are the tree's (ivf-lists) reads the variant's leaf count too."""
    tree = tree_leaf_count({**config["train"], **variant_overrides(wildcards.variant)})
    return rule_settings(config["search"], wildcards.system, tree)


def outputs_of(variant):
    """Everything one variant ends in: per-query metrics of each system, the summary, train logs."""
    systems = variant_systems(variant)
    models = sorted({s.split("+")[0] for s in systems} - {"pre"})
    return [
        f"{RES}/{variant}/summary.parquet",
        *expand(f"{RES}/{variant}/train_log/{{model}}.parquet", model=models),
    ]


def step_log_outputs(variants):
    """The step log and its figure (rules train_steps, train_steps_figure) of each variant whose EHI
    training sets train.diag_every: nothing for any other."""
    return [f"{RES}/{v}/train_steps/ehi.{ext}" for v in variants
            if "ehi" in {s.split("+")[0] for s in variant_systems(v)}
            and train_params(v, "ehi").get("diag_every", 0) > 0 for ext in ("parquet", "png")]


def trec_runs(variant):
    """The TREC run files of every system of a variant (one folder per system, one file per budget)."""
    return expand(f"{R}/{variant}/runs/trec/{{system}}", system=variant_systems(variant))


def exact_names(names):
    """A wildcard pattern matching exactly ``names`` (none: a pattern that matches nothing)."""
    return "|".join(re.escape(n) for n in names) or "(?!)"


def encoder_input(wildcards):
    # the untrained encoder ("pre") needs no training job
    return [] if wildcards.model == "pre" else f"{R}/{wildcards.variant}/{wildcards.model}/train/encoder"


def search_inputs(wildcards):
    model, method = wildcards.system.split("+")
    emb = f"{R}/{wildcards.variant}/{model}/emb"
    inputs = {"data": DATA_FILES, "corpus": f"{emb}/corpus.npy", "queries": f"{emb}/queries.npy"}
    if ann_kind(method).from_index:  # a search of the trained tree index (EHI's tree), not of embeddings
        inputs["index"] = f"{R}/{wildcards.variant}/ehi/index"
    settings = search_settings(wildcards)
    # the grid the tree's leaf count came from, or that count itself (a search with the tree's lists)
    if "lists_from_leaf_count" in settings or settings.get("tree_leaves") == "auto":
        inputs["leaf_count"] = LEAF_COUNT
    return inputs


def data_dir(wildcards, input):
    """Folder of the dataset Parquet tables, taken from the `data` input of the job."""
    return os.path.dirname(input.data[0])


MISSING_CACHED = []  # what a report-only run goes without (named by report.smk, not a MissingInputException)


def cached(path):
    if not REPORT_ONLY:
        return path
    if os.path.exists(path):
        return os.path.abspath(path)
    MISSING_CACHED.append(path)
    return []


def split_qrels():
    """The prepared qrels, which each reader of per-query tables checks their queries against (its
    split's judged ones, ehi/evaluate/result_checks.py): a report-only run reads them where they
    were prepared, else holds the tables to each other's queries (a fresh clone has no data)."""
    qrels = f"{DATA_DIR}/qrels.parquet"
    if not REPORT_ONLY:
        return [qrels]
    return [os.path.abspath(qrels)] if os.path.exists(qrels) else []


def ablation_tests_input():
    """The ablation tests that the tables read (ABLATION_SIGNIFICANCE, made in evaluate.smk). A
    report-only run reads the cached table as it is, unless it holds no test of an ablation variant
    whose per-query tables are here (made before that variant ran, the tables would show its
    results beside no test of them) or is missing. Then rule ablation_significance makes it from
    the cached per-query tables, the stale table dated back so that the rule runs
    (ehi.report.report_files.untested_ablation_variants)."""
    if not ABLATIONS or not REPORT_ONLY:
        return [ABLATION_SIGNIFICANCE] if ABLATIONS else []
    if os.path.exists(ABLATION_SIGNIFICANCE):
        rows = ["main", *dict.fromkeys(v for vs in ABLATIONS.values() for v in vs)]
        tables = {v: [f"{RES}/{v}/per_query/{s}.parquet" for s in config["ablation_systems"] if s in variant_systems(v)]
                  for v in rows}
        if not untested_ablation_variants(ABLATION_SIGNIFICANCE, tables):
            return [cached(ABLATION_SIGNIFICANCE)]
        date_back(Path(ABLATION_SIGNIFICANCE))
    return [ABLATION_SIGNIFICANCE]
