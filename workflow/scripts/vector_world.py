"""Rule vector_world: the synthetic vector world of a `worlds` entry's knobs, in the embeddings layout."""

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

from ehi.core.unfinished import hold
from ehi.data.vector_world import WorldConfig, generate_world

log = setup(snakemake)
attempt = hold(snakemake)  # its update() output: removed once it is in place (ehi/core/unfinished.py)
generate_world(snakemake.output[0], WorldConfig.from_dict(snakemake.params.knobs))
attempt.unlink()
