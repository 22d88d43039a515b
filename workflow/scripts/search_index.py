"""Rule search_index: bundle index, encoder, document titles, config and the dev-chosen beam for `ehi search`."""

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

import numpy as np

from ehi.data.dataset import Dataset
from ehi.search.budget_beam import dev_beam
from ehi.search.tree_index import EHIIndex
from ehi.serve.api import save_search_index

log = setup(snakemake)
inp, p = snakemake.input, snakemake.params
dataset = Dataset.read(p.data_dir)
index = EHIIndex.load(inp.index)
beam = dev_beam(index, dataset.queries, np.load(inp.queries, mmap_mode="r"), dict(p.train))
log.info("the beam at the dev budget: %s", beam)
save_search_index(snakemake.output[0], index, inp.encoder, dataset.corpus, dict(p.train), beam=beam)
