# Helpers shared by the stage files; kept small, since anything that grows belongs in `ehi`.
import os

import pandas as pd
from snakemake.utils import Paramspace

DS = config["dataset"]["name"]
R = f"resources/{DS}"  # heavy artefacts (git-ignored)
RES = f"results/{DS}"  # small cached results (committed)
DATA_DIR = f"{R}/data"
DATA_FILES = expand(f"{DATA_DIR}/{{kind}}.parquet", kind=["corpus", "queries", "qrels"])
# The conda environment every rule runs in (pip users already have it through pyproject.toml).
ENV = "../envs/ehi.yaml"

# Implementation versions: Snakemake cannot see code changes inside `ehi/`. Bump a stage's number
# when its code changes results; the number is a param, so Snakemake reruns the stage and
# everything downstream of it.
VERSIONS = {"data": 2, "train": 1, "embed": 1, "index": 1, "search": 2, "evaluate": 1, "report": 2}


def _ablation_variants():
    """{ablation name: [variant path]} with Paramspace-style key~value/... variant paths."""
    variants = {}
    for name, rows in config["ablations"].items():
        unknown = sorted({k for row in rows for k in row} - set(config["train"]))
        if unknown:
            raise ValueError(f"config ablations.{name}: {unknown} are not train keys; known: {sorted(config['train'])}")
        # a key some rows leave out takes the main setting's value in them (paths stay comparable)
        table = pd.DataFrame(rows)
        table = table.fillna({k: config["train"][k] for k in table.columns}).infer_objects()
        variants[name] = list(Paramspace(table).instance_patterns)
    return variants


ABLATIONS = _ablation_variants()


def variant_overrides(variant):
    """The train keys a variant path sets: 'height~1/branching~64' -> {'height': 1, 'branching': 64}."""
    if variant == "main":
        return {}
    import yaml

    return {k: yaml.safe_load(v) for k, v in (part.split("~", 1) for part in variant.split("/"))}


def train_params(variant, model):
    """The TrainConfig of one model in one variant (DE: the same settings without the tree)."""
    params = {**config["train"], **variant_overrides(variant), "max_length": config["encoder"]["max_length"]}
    params["use_tree"] = model == "ehi"
    return params


def variant_systems(variant):
    return config["search"]["systems"] if variant == "main" else config["ablation_systems"]


def outputs_of(variant):
    """Everything one variant ends in: per-query metrics of each system, the summary, train logs."""
    systems = variant_systems(variant)
    models = sorted({s.split("+")[0] for s in systems} - {"pre"})
    return [
        f"{RES}/{variant}/summary.parquet",
        *expand(f"{RES}/{variant}/train_log/{{model}}.parquet", model=models),
    ]


def encoder_input(wildcards):
    # the untrained encoder ("pre") needs no training job
    return [] if wildcards.model == "pre" else f"{R}/{wildcards.variant}/{wildcards.model}/train/encoder"


def search_inputs(wildcards):
    model, method = wildcards.system.split("+")
    emb = f"{R}/{wildcards.variant}/{model}/emb"
    inputs = {"data": DATA_FILES, "corpus": f"{emb}/corpus.npy", "queries": f"{emb}/queries.npy"}
    if method in ("tree", "tree-pq"):
        inputs["index"] = f"{R}/{wildcards.variant}/ehi/index"
    return inputs


def data_dir(wildcards, input):
    """Folder of the dataset Parquet tables, taken from the `data` input of the job."""
    return os.path.dirname(input.data[0])


def requested_targets():
    """The targets named on the command line (Snakemake does not expose them while parsing)."""
    import sys

    from snakemake.cli import get_argument_parser

    try:
        args, _ = get_argument_parser().parse_known_args(sys.argv[1:])
        return list(args.targets or [])
    except (SystemExit, Exception):  # not the CLI (API use, a spawned job): the full DAG
        return []


VARIANTS = ["main"] + [v for vs in ABLATIONS.values() for v in vs]
# `snakemake tables` (and/or `claims`) alone, where cached results exist, re-renders from them as they are: its
# inputs are then given as absolute paths, which no rule's output matches, so nothing upstream
# (whose heavy inputs a fresh clone lacks) is scheduled. Otherwise the report waits for the pipeline.
_TARGETS = set(requested_targets())
REPORT_ONLY = bool(_TARGETS) and _TARGETS <= {"tables", "claims"} and os.path.exists(f"{RES}/significance.parquet")


def cached(path):
    return os.path.abspath(path) if REPORT_ONLY else ancient(path)
