# EHI reproduction pipeline. The stages live in workflow/rules/ (one file each, in pipeline order);
# the work itself lives in the `ehi` package. docs/configuration.md lists the targets.
import atexit
import logging
import os
import shutil

from snakemake.utils import min_version, validate

from ehi.core.config_files import read_config_files
from ehi.core.console import one_line_a_job
from ehi.core.config_schema import validate_config, variant_key_order
from ehi.core.errors import exit_on_user_error
from ehi.search.factory_kinds import register_factories
from ehi.search.registry import check_systems, system_pattern
from ehi.train.grid import as_choices, take_grid
from ehi.core.kernels import pin_kernels
from ehi.core.dataset_source import name_dataset_sources
from ehi.vector_checks import check_vector_dataset_name
from ehi.evaluate.variant_systems import row_names

# the same CPU kernels on every machine (ehi/core/kernels.py): set here, inherited by every job
pin_kernels()

min_version("9.0")

# Under --quiet rules (the README's command), Snakemake's own console comes down to a line a job
# (ehi/core/console.py); its log file under .snakemake/log/ keeps every line
if not workflow.modifier.namespace:
    one_line_a_job(logging.getLogger("snakemake.logging"), workflow.output_settings.quiet, workflow.dryrun)


# The embedded default, unless configs are given with --configfile: each config under config/ is
# complete on its own (layered ones, e.g. config/ablations.yaml, extend the ones before them).
DEFAULT_CONFIG = os.path.join(workflow.basedir, "config", "config.yaml")
SCHEMA = os.path.join(workflow.basedir, "workflow", "schemas", "config.schema.yaml")
# the order in which a variant path names an ablation row's keys (ehi.core.config_schema.ablation_rows)
TRAIN_KEY_ORDER = variant_key_order(SCHEMA)
# Every config file read again, strictly (ehi/core/config_files.py): a key given twice is refused
# naming file and line, and a schema error names the file that set its key. Not in an instance of
# workflow/multi.smk, whose config is one `datasets:` entry laid over these files.
with exit_on_user_error("snakemake"):
    CONFIG_FILES = {} if workflow.modifier.namespace else read_config_files(workflow.overwrite_configfiles or [DEFAULT_CONFIG])
if not workflow.overwrite_configfiles:

    configfile: DEFAULT_CONFIG

# a dataset named by the producer that writes it (dataset: {world: n1e4} or {encoding: ...}) read as
# that folder and its identity tower, before the schema fills defaults (ehi/data/produced.py)
with exit_on_user_error("snakemake"):
    name_dataset_sources(config)


# A job killed while it updated an update() output (trained models, the report: kept through a failed
# rerun) leaves Snakemake's backup of it behind, which would make the next run of that job fail.
# onstart runs under this run's lock, before any job: every backup there is such a leftover.
if not workflow.modifier.namespace:

    onstart:
        shutil.rmtree(workflow.persistence.path / "backups", ignore_errors=True)

    # the front page of `snakemake --report`: what the run was and where its claims are
    report: "workflow/report/workflow.rst"

    # the run's last lines, printed as the process exits, so they come after Snakemake's log-file and
    # elapsed-time lines: how the results compare with the committed ones (results/reproduction.md,
    # ehi/report/reproduction.py), then what to open (the claims' verdicts, the KMR table and figure)
    onsuccess:
        from ehi.report.missing import what_to_open
        from ehi.report.reproduction import reproduction_report

        closing = reproduction_report(".") + what_to_open(list(config.get("datasets") or [config["dataset"]["name"]]))
        atexit.register(print, "\n".join(closing))


# Folders the datasets read that the DAG makes itself (built and encoded collections): once, at the
# top of the workflow, never inside a dataset's instance (workflow/rules/produced.smk).
if not workflow.modifier.namespace:

    include: "workflow/rules/produced.smk"


# Several datasets at once (`datasets:` in the config): workflow/multi.smk runs each as an instance
# of this Snakefile (a Snakemake module given that dataset's config). One dataset: the stages below.
if config.get("datasets"):

    include: "workflow/multi.smk"

else:

    # the schema (one line naming the key; fills the defaults), then system names against the ANNS
    # registry (plugins and the config's FAISS factories included, the latter exported to every job:
    # ehi/core/plugins.py, ehi/search/factory_kinds.py), not a typed list
    with exit_on_user_error("snakemake"):
        # train keys chosen on dev ({choose: [...]}, ehi/train/grid.py): the schema and every check
        # read the grid's first value; the grid itself drives the training rules (workflow/rules/settings.smk)
        TRAIN_GRID = take_grid(config.setdefault("train", {}))
        validate_config(config, SCHEMA, validate, CONFIG_FILES)
        check_vector_dataset_name(config, CONFIG_FILES, SCHEMA)
        register_factories(config["search"]["faiss_factories"])
        check_systems(config["search"]["systems"], "search.systems")
        check_systems(config["ablation_systems"], "ablation_systems", encoders=("de", "ehi"))


    include: "workflow/rules/common.smk"
    include: "workflow/rules/settings.smk"


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

    # this dataset's trained indexes timed at equal quality (trained_benchmark:), its trees named by
    # ablation row as variant systems are; at the top of the workflow only (a several-datasets
    # config times one of its datasets from workflow/multi.smk)
    if not workflow.modifier.namespace:
        TB_DATASETS, TB_ROWS, TB_LISTS = [DS], row_names(ABLATIONS), config["search"]["ivf_nlist"]

        include: "workflow/rules/trained_benchmark.smk"


    # the searchable indexes (rule search_index): the main setting's tree, or where the main setting
    # trains none (config/embeddings_decisive.yaml: DE alone) the tree of each variant system
    SEARCH_INDEXES = ([f"{R}/main/ehi/search_index"] if "ehi" in {s.split("+")[0] for s in variant_systems("main")}
                      else list(dict.fromkeys(f"{R}/{spec.variant}/ehi/search_index" for spec in VARIANT_SYSTEMS
                                              if spec.system.startswith("ehi+"))))


    rule all:
        input:
            rules.tables.output,
            rules.claims.output,
            SEARCH_INDEXES,
            [p for v in VARIANTS for p in trec_runs(v)],
            step_log_outputs(VARIANTS + REPLICAS),
            DATA_MANIFEST,
        default_target: True


    rule data:
        input:
            DATA_FILES,
            DATA_MANIFEST,


    rule train_all:
        input:
            [p for v in VARIANTS + REPLICAS for p in outputs_of(v)[1:]],
            GRID_CHOICES,
            step_log_outputs(VARIANTS + REPLICAS),
            DATA_MANIFEST,


    # the step logs of train.diag_every and their figures (workflow/rules/train.smk), alone
    rule step_logs:
        input:
            step_log_outputs(VARIANTS + REPLICAS),


    rule main:
        input:
            [p for v in SEED_REPLICAS["main"] for p in outputs_of(v)],
            DATA_MANIFEST,
            f"{RES}/significance.parquet",
            SEARCH_INDEXES,
            trec_runs("main"),


    # one target per ablation table: `snakemake --cores 8 ablation_<name>` runs only its variants
    for _name, _variants in ABLATIONS.items():

        rule:
            name:
                f"ablation_{_name}"
            input:
                [p for v in _variants for p in [*outputs_of(v), *trec_runs(v)]],
                DATA_MANIFEST,
