"""Rule geometry: facts of a dataset's vectors on its test queries (ehi.report.world_fit.geometry)."""

from pathlib import Path

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

import numpy as np

from ehi.core.io import write_json
from ehi.data.dataset import Dataset
from ehi.model.embed import load_array
from ehi.report.world_fit import geometry

log = setup(snakemake)
dataset = Dataset.read(Path(snakemake.input.data[0]).parent)  # the prepared tables' folder
docs, queries = load_array(snakemake.input.corpus), load_array(snakemake.input.queries)
rows, relevant = dataset.judged_rows("test")
facts = geometry(docs, queries[rows], [np.fromiter(r, dtype=np.int64, count=len(r)) for r in relevant])
write_json(facts, snakemake.output[0])
log.info("geometry of %s: %s", dataset.name, facts)
