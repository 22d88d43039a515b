# Several datasets in one run. Every entry of `datasets:` overrides the rest of the config for one
# dataset (its `dataset` block, tree shape, any other key) and runs as its own instance of the
# pipeline: the Snakefile as a Snakemake module with that dataset's config, its rules renamed
# `<dataset>__<rule>`, its files under resources/<dataset>/, results/<dataset>/, logs/<dataset>/.
# The instances share nothing but code. The targets below (all, data, train_all, main, tables,
# claims) gather the same target of every dataset; `tables` adds the cross-dataset table.
from ehi.core.catalog import dataset_resources, dataset_results
from ehi.core.errors import within
from ehi.core.unfinished import outdate_unfinished
from ehi.report.dev_choice import training_logs
from ehi.evaluate.variant_systems import config_ablations, row_names


include: "rules/targets.smk"
include: "rules/datasets.smk"


with exit_on_user_error("snakemake"):
    # a grid of the shared train keys (ehi/train/grid.py) is validated at its first value, then handed
    # to every dataset, whose own instance chooses on its own dev split
    _GRID = take_grid(config.setdefault("train", {}))
    validate_config(config, SCHEMA, validate, CONFIG_FILES)
    config["train"].update(as_choices(_GRID))
    DATASETS = dataset_configs(config)
    PREFIX = rule_prefixes(DATASETS)

for _name, _config in DATASETS.items():
    _prefix = PREFIX[_name]

    module:
        name:
            _name
        snakefile:
            os.path.join(workflow.basedir, "Snakefile")
        config:
            _config

    # a refusal inside an instance (its schema, its checks) names the entry it comes from
    with within(f"datasets entry {_name!r}"):

        use rule * from _name as _prefix*


# `snakemake tables` alone renders only the datasets whose cached results exist (as one dataset's
# `tables` does), from those results as they are; otherwise every dataset, after its pipeline.
_CACHED = [n for n in DATASETS if os.path.exists(f"{dataset_results(n)}/significance.parquet")]
REPORT_ONLY = report_only(bool(_CACHED))
REPORTED = _CACHED if REPORT_ONLY else list(DATASETS)
ACROSS = f"across_{'+'.join(DATASETS)}"  # the cross-dataset table and figure of this list of datasets


include: "rules/gain.smk"
# the benchmark's trees named by ablation row of its dataset, as in a one-dataset config; peers on the sqrt(N) grid
_TB_CONFIG = DATASETS.get((config.get("trained_benchmark") or {}).get("dataset"))
TB_DATASETS, TB_LISTS = DATASETS, None
TB_ROWS = row_names(config_ablations(_TB_CONFIG, SCHEMA)) if _TB_CONFIG else {}

include: "rules/trained_benchmark.smk"

# the gain tables when `gain:` names datasets, every one of them reported
GAIN_OUTPUTS = ([*rules.gain_table.output, *rules.gain_scaling.output]
                if GAIN_DATASETS and all(n in REPORTED for n, (_, ours) in GAIN_DATASETS.items() if ours) else [])


onstart:
    # each dataset's manifest, as one dataset's run checks its own (ehi/data/manifest.py)
    from ehi.data.manifest import check_manifest

    for _name in DATASETS:
        check_manifest(f"{dataset_resources(_name)}/data")


# the tables below are update() outputs: a failed job keeps them and its marker beside its log has
# the next run render again (ehi/core/unfinished.py)
outdate_unfinished("logs", recursive=False)


localrules:
    tables,
    claims,


rule all:
    input:
        of_each("all"),
        f"results/tables/{ACROSS}.md",
        GAIN_OUTPUTS,
    default_target: True


rule data:
    input:
        of_each("data"),


rule train_all:
    input:
        of_each("train_all"),


rule main:
    input:
        of_each("main"),


rule step_logs:
    input:
        of_each("step_logs"),


ACROSS_SEEDING = {n: across_seeding(n, DATASETS) for n in REPORTED}


rule across_datasets:
    """One row per dataset: each system at <= 5%, <= 10% and exact (seed mean ± sd over training
    seeds), EHI's trees against the best peer."""
    input:
        summaries=[report_input(f"{dataset_results(n)}/{v}/summary.parquet", REPORT_ONLY) for n in REPORTED
                   for v in sorted({r for rs in ACROSS_SEEDING[n]["seed_replicas"].values() for r in rs} | {"main"})],
        significance=[report_input(f"{dataset_results(n)}/significance.parquet", REPORT_ONLY) for n in REPORTED],
    output:
        md=update(f"results/tables/{ACROSS}.md"),
        tex=update(f"results/tables/{ACROSS}.tex"),
        csv=update(f"results/tables/{ACROSS}.csv"),
        figure=update(f"results/figures/{ACROSS}.png"),
    params:
        datasets=REPORTED,
        seeding=ACROSS_SEEDING,
        version=2,
    log:
        f"logs/{ACROSS}.log",
    conda:
        "envs/ehi.yaml"
    script:
        "scripts/across_datasets.py"


rule geometry:
    input:
        [f"{dataset_results(n)}/geometry.json" for n in DATASETS],




# A grid of training settings spread over this config's datasets, chosen on dev (ehi/report/dev_choice.py).
rule dev_choice:
    input:
        [f for n in DATASETS for f in training_logs(n, DATASETS[n], TRAIN_KEY_ORDER).values()],
    output:
        md=update(f"results/tables/dev_choice_{'+'.join(DATASETS)}.md"),
        csv=update(f"results/tables/dev_choice_{'+'.join(DATASETS)}.csv"),
    params:
        logs=[list(k) for n in DATASETS for k in training_logs(n, DATASETS[n], TRAIN_KEY_ORDER)],
    log:
        "logs/dev_choice.log",
    conda:
        "envs/ehi.yaml"
    script:
        "scripts/dev_choice.py"


# The world held to the real collections (ehi/report/world_fit.py): this config's datasets and the
# committed ones `world_fit.compare_with` names, each from its own geometry and summary files.
WORLD_FIT = [*DATASETS, *(n for n in config.get("world_fit", {}).get("compare_with", []) if n not in DATASETS)]


rule world_fit:
    input:
        geometry=[f"{dataset_results(n)}/geometry.json" if n in DATASETS else os.path.abspath(f"{dataset_results(n)}/geometry.json")
                  for n in WORLD_FIT],
        summaries=[f"{dataset_results(n)}/main/summary.parquet" if n in DATASETS
                   else os.path.abspath(f"{dataset_results(n)}/main/summary.parquet") for n in WORLD_FIT],
    output:
        md=update("results/tables/world_fit.md"),
        csv=update("results/tables/world_fit.csv"),
    params:
        datasets=WORLD_FIT,
    log:
        "logs/world_fit.log",
    conda:
        "envs/ehi.yaml"
    script:
        "scripts/world_fit.py"


# The world's knobs held to a real collection's facts (ehi/report/world_calibration.py): one world a
# point of `world_calibration.grid`, measured on the facts rule geometry measures on the target.
CALIBRATION = config.get("world_calibration") or {}
with exit_on_user_error("snakemake"):
    # a dataset of this config is built by its rules; another config's is read as committed
    _target = calibration_target(CALIBRATION, DATASETS)
if _target:

    rule world_calibration:
        input:
            geometry=f"{_target}/geometry.json",
            summary=f"{_target}/main/summary.parquet",
        output:
            md=update(f"results/tables/{CALIBRATION['name']}.md"),
            csv=update(f"results/tables/{CALIBRATION['name']}.csv"),
        params:
            calibration=CALIBRATION,
            version=1,
        log:
            f"logs/{CALIBRATION['name']}.log",
        conda:
            "envs/ehi.yaml"
        script:
            "scripts/world_calibration.py"


rule tables:
    input:
        [f for n in REPORTED for f in getattr(rules, PREFIX[n] + "tables").output],
        rules.across_datasets.output,
        GAIN_OUTPUTS,


rule claims:
    input:
        [f for n in REPORTED for f in getattr(rules, PREFIX[n] + "claims").output],
