"""Rule search_index: bundle index, encoder, document titles and config for `ehi search`."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir)))  # noqa: F821 (snakemake is injected)
from _common import setup  # noqa: E402

from ehi.serve.api import save_search_index  # noqa: E402
from ehi.data.dataset import Dataset  # noqa: E402
from ehi.search.tree_index import EHIIndex  # noqa: E402

log = setup(snakemake)  # noqa: F821
inp, p = snakemake.input, snakemake.params  # noqa: F821
corpus = Dataset.read(p.data_dir).corpus
save_search_index(snakemake.output[0], EHIIndex.load(inp.index), inp.encoder, corpus, dict(p.train))  # noqa: F821
