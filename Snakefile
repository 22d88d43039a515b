# EHI reproduction pipeline. The stages live in workflow/rules/ (one file each, in pipeline order);
# the work itself lives in the `ehi` package. README.md lists the targets.
import os

from snakemake.utils import min_version, validate

from ehi.core.errors import exit_on_user_error
from ehi.search.registry import check_systems, system_pattern
from ehi.core.kernels import pin_kernels

# the same CPU kernels on every machine (ehi/core/kernels.py): set here, inherited by every job
pin_kernels()

min_version("9.0")


# The embedded default, unless configs are given with --configfile: each config under config/ is
# complete on its own (layered ones, e.g. config/ablations.yaml, extend the ones before them).
if not workflow.overwrite_configfiles:

    configfile: os.path.join(workflow.basedir, "config", "config.yaml")


# Several datasets at once (`datasets:` in the config): workflow/multi.smk runs each as an instance
# of this Snakefile (a Snakemake module given that dataset's config). One dataset: the stages below.
if config.get("datasets"):

    include: "workflow/multi.smk"

else:

    validate(config, "workflow/schemas/config.schema.yaml")
    # system names against the ANNS registry (plugins included; ehi/core/plugins.py), not a typed list
    with exit_on_user_error("snakemake"):
        check_systems(config["search"]["systems"], "search.systems")
        check_systems(config["ablation_systems"], "ablation_systems", encoders=("de", "ehi"))


    include: "workflow/rules/common.smk"


    wildcard_constraints:
        kind="corpus|queries|qrels",
        model="pre|de|ehi",
        variant=r"main|[a-z_]+~[^/]+(/[a-z_]+~[^/]+)*",
        system=system_pattern(),


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
            [p for v in VARIANTS for p in trec_runs(v)],
            DATA_MANIFEST,
        default_target: True


    rule data:
        input:
            DATA_FILES,
            DATA_MANIFEST,


    rule train_all:
        input:
            [p for v in VARIANTS + REPLICAS for p in outputs_of(v)[1:]],
            DATA_MANIFEST,


    rule main:
        input:
            [p for v in SEED_REPLICAS["main"] for p in outputs_of(v)],
            DATA_MANIFEST,
            f"{RES}/significance.parquet",
            f"{R}/main/ehi/search_index",
            trec_runs("main"),


    # one target per ablation table: `snakemake --cores 8 ablation_<name>` runs only its variants
    for _name, _variants in ABLATIONS.items():

        rule:
            name:
                f"ablation_{_name}"
            input:
                [p for v in _variants for p in [*outputs_of(v), *trec_runs(v)]],
                DATA_MANIFEST,
