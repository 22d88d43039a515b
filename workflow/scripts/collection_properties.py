"""Rule collection_properties: facts of a dataset's pretrained vectors on its dev queries, before any
training (ehi.report.collection_properties)."""

from pathlib import Path

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

import json

from ehi.core.io import write_json
from ehi.data.dataset import Dataset
from ehi.model.embed import load_array
from ehi.report.collection_properties import collection_properties
from ehi.report.gain import leaf_count

log = setup(snakemake)
dataset = Dataset.read(Path(snakemake.input.data[0]).parent)  # the prepared tables' folder
docs, queries = load_array(snakemake.input.corpus), load_array(snakemake.input.queries)
rows, relevant = dataset.judged_rows("dev")
n_lists = leaf_count(Path(snakemake.output[0]).parent, snakemake.params.branching)  # beside dev_leaf_count.json
facts = collection_properties(docs, queries[rows], relevant, n_lists)
write_json(facts, snakemake.output[0])
log.info("properties of %s: %s", dataset.name, json.dumps(facts))
