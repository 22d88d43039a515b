"""Rule encode_collection: a text collection encoded once into an embeddings folder."""

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

from ehi.model.encode_collection import encode_collection
from ehi.data.sources import SOURCES

log = setup(snakemake)
p = snakemake.params
folder = snakemake.input.collection
dataset = SOURCES[p.source].load_local(folder, name=snakemake.wildcards.encoding)
encode_collection(dataset, snakemake.output[0], p.encoder, p.max_length, p.batch_size, source=folder)
