"""Rule embed: corpus and query embeddings of one encoder, cached as .npy (rows = table order)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir)))  # noqa: F821 (snakemake is injected)
from _common import setup  # noqa: E402

from ehi.data.dataset import Dataset  # noqa: E402
from ehi.model.embed import embed_dataset, save_array, timing_frame  # noqa: E402
from ehi.core.io import write_table  # noqa: E402

log = setup(snakemake)  # noqa: F821
p, out = snakemake.params, snakemake.output  # noqa: F821
dataset = Dataset.read(p.data_dir)
docs, queries, facts = embed_dataset(p.encoder, dataset, p.max_length, p.batch_size,
                                      cache_dir=p.cache_dir, version=p.version)
save_array(docs, out.corpus)
save_array(queries, out.queries)
timings = timing_frame(p.dataset, snakemake.wildcards.model, facts, len(docs), len(queries), snakemake.threads)  # noqa: F821
write_table(timings, "timings", out.timing)
