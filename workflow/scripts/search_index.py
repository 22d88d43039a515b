"""Rule search_index: bundle index, encoder, document titles and config for `ehi search`."""

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

from ehi.serve.api import save_search_index
from ehi.data.dataset import Dataset
from ehi.search.tree_index import EHIIndex

log = setup(snakemake)
inp, p = snakemake.input, snakemake.params
corpus = Dataset.read(p.data_dir).corpus
save_search_index(snakemake.output[0], EHIIndex.load(inp.index), inp.encoder, corpus, dict(p.train))
