"""Rule collection_properties: facts of a dataset's pretrained vectors on its dev queries, before any
training (ehi.report.collection_properties)."""

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

import json

from ehi.core.io import write_json
from ehi.data.dataset import Dataset
from ehi.model.embed import load_array
from ehi.report.collection_properties import collection_properties
from ehi.report.gain import leaf_count

log = setup(snakemake)
dataset = Dataset.read(snakemake.input.data[0].rsplit("/", 1)[0])
docs, queries = load_array(snakemake.input.corpus), load_array(snakemake.input.queries)
dev, qrels = dataset.split("dev")
doc_row = {d: i for i, d in enumerate(dataset.corpus.doc_id)}
query_row = {q: i for i, q in enumerate(dataset.queries.query_id)}
judged = qrels[qrels.relevance > 0].groupby("query_id")
grades = {q: {doc_row[d]: int(r) for d, r in zip(rows.doc_id, rows.relevance)} for q, rows in judged}
ids = [q for q in dev.query_id if q in grades]
n_lists = leaf_count(snakemake.output[0].rsplit("/", 1)[0], snakemake.params.branching)
facts = collection_properties(docs, queries[[query_row[q] for q in ids]], [grades[q] for q in ids], n_lists)
write_json(facts, snakemake.output[0])
log.info("properties of %s: %s", dataset.name, json.dumps(facts))
