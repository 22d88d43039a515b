"""Rule vector_world: the synthetic vector world of a `worlds` entry's knobs, in the embeddings layout."""

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

from ehi.data.vector_world import WorldConfig, generate_world

log = setup(snakemake)
generate_world(snakemake.output[0], WorldConfig.from_dict(snakemake.params.knobs))
