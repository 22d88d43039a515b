"""Rule build_collection: a collection's own build script, run into a folder beside the output and
moved into place whole (a failed or killed build leaves no half-written collection)."""

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

from ehi.data.produced import run_build_script

log = setup(snakemake)
run_build_script(snakemake.params.script, snakemake.output[0], list(snakemake.params.args))
