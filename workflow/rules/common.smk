# Helpers shared by the rule files. Keep this small: anything that grows belongs in `ehi`.
import sys

DS = config["dataset"]["name"]
DATA_DIR = f"resources/{DS}/data"
DATA_FILES = expand(f"{DATA_DIR}/{{kind}}.parquet", kind=["corpus", "queries", "qrels"])
# The conda environment every rule runs in (pip users already have it through pyproject.toml).
ENV = "../envs/ehi.yaml"

# Implementation versions: Snakemake cannot see code changes inside `ehi/`. Bump a stage's number
# when its code changes results, and Snakemake reruns that stage and everything downstream
# (`snakemake --rerun-triggers params ...` is the default behaviour).
VERSIONS = {"data": 1}


wildcard_constraints:
    kind="corpus|queries|qrels",
