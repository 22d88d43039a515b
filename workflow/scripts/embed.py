"""Rule embed: corpus and query embeddings of one encoder, cached as .npy (rows = table order)."""

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

from ehi.data.dataset import Dataset
from ehi.model.embed import embed_dataset, save_array, timing_frame
from ehi.core.io import write_table

log = setup(snakemake)
p, out = snakemake.params, snakemake.output
dataset = Dataset.read(p.data_dir)
docs, queries, facts = embed_dataset(p.encoder, dataset, p.max_length, p.batch_size,
                                      cache_dir=p.cache_dir, version=p.version)
save_array(docs, out.corpus)
save_array(queries, out.queries)
timings = timing_frame(p.dataset, snakemake.wildcards.model, facts, len(docs), len(queries), snakemake.threads)
write_table(timings, "timings", out.timing)
