"""Rule build_collection: a collection's own build script, run into a folder beside the output and
moved into place whole (a failed or killed build leaves the previous collection as it was)."""

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

from ehi.core.unfinished import hold
from ehi.data.collection_build import run_build_script

log = setup(snakemake)
attempt = hold(snakemake)  # its update() output: removed once it is in place (ehi/core/unfinished.py)
run_build_script(snakemake.params.script, snakemake.output[0], list(snakemake.params.args))
attempt.unlink()
