# EHI reproduction pipeline. The stages live in workflow/rules/ (one file each, in pipeline order);
# the work itself lives in the `ehi` package. See README.md for the targets.
from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config/config.yaml"


validate(config, "workflow/schemas/config.schema.yaml")


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"


rule all:
    input:
        DATA_FILES,
    default_target: True


rule data:
    input:
        DATA_FILES,
