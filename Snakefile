# EHI reproduction pipeline. The stages live in workflow/rules/ (one file each, in pipeline order);
# the work itself lives in the `ehi` package. README.md lists the targets.
import os

from snakemake.utils import min_version, validate

min_version("9.0")


# The embedded default, unless configs are given with --configfile: each config under config/ is
# complete on its own (layered ones, e.g. config/ablations.yaml, extend the ones before them).
if not workflow.overwrite_configfiles:

    configfile: os.path.join(workflow.basedir, "config", "config.yaml")


validate(config, "workflow/schemas/config.schema.yaml")


include: "workflow/rules/common.smk"


onstart:
    # a dataset whose source copy or prepared tables changed since preparation stops the run here,
    # with the changed file named (ehi/data/manifest.py)
    from ehi.data.manifest import check_manifest

    check_manifest(DATA_DIR)


wildcard_constraints:
    kind="corpus|queries|qrels",
    model="pre|de|ehi",
    variant=r"main|[a-z_]+~[^/]+(/[a-z_]+~[^/]+)*",
    system=r"(pre|de|ehi)\+(exact|tree-pq|tree|faiss-ivfpq|faiss-ivf|faiss-hnsw|scann|scann-ah)",


include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/tune.smk"
include: "workflow/rules/index.smk"
include: "workflow/rules/search.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/benchmarks.smk"


rule all:
    input:
        rules.tables.output,
        rules.claims.output,
        f"{R}/main/ehi/search_index",
    default_target: True


rule data:
    input:
        DATA_FILES,


rule train_all:
    input:
        [p for v in VARIANTS for p in outputs_of(v)[1:]],


rule main:
    input:
        outputs_of("main"),
        f"{RES}/significance.parquet",
        f"{R}/main/ehi/search_index",


# one target per ablation table: `snakemake --cores 8 ablation_<name>` runs only its variants
for _name, _variants in ABLATIONS.items():

    rule:
        name:
            f"ablation_{_name}"
        input:
            [p for v in _variants for p in outputs_of(v)],
