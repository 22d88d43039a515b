"""Rule geometry: facts of a dataset's vectors on its test queries (ehi.report.world_fit.geometry)."""

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

import numpy as np

from ehi.core.io import write_json
from ehi.data.dataset import Dataset
from ehi.model.embed import load_array
from ehi.report.world_fit import geometry

log = setup(snakemake)
dataset = Dataset.read(snakemake.input.data[0].rsplit("/", 1)[0])
docs, queries = load_array(snakemake.input.corpus), load_array(snakemake.input.queries)
test, qrels = dataset.split("test")
doc_row = {d: i for i, d in enumerate(dataset.corpus.doc_id)}
query_row = {q: i for i, q in enumerate(dataset.queries.query_id)}
judged = qrels[qrels.relevance > 0].groupby("query_id").doc_id.apply(lambda ids: np.array([doc_row[d] for d in ids]))
ids = [q for q in test.query_id if q in judged.index]
facts = geometry(docs, queries[[query_row[q] for q in ids]], [judged[q] for q in ids])
write_json(facts, snakemake.output[0])
log.info("geometry of %s: %s", dataset.name, facts)
