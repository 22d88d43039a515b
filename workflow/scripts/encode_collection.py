"""Rule encode_collection: a text collection encoded once into an embeddings folder."""

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

from ehi.core.fingerprint import identity_name
from ehi.core.unfinished import hold
from ehi.data.sources import SOURCES
from ehi.model.encode_collection import encode_collection

log = setup(snakemake)
attempt = hold(snakemake)  # its update() output: removed once it is in place (ehi/core/unfinished.py)
p = snakemake.params
folder = snakemake.input.collection
dataset = SOURCES[p.source].load_local(folder, name=snakemake.wildcards.encoding)
encode_collection(dataset, snakemake.output[0], identity_name(p.encoder), p.max_length, p.batch_size, source=folder)
attempt.unlink()
