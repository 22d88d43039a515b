"""Rule dev_tree_shape: compare tree shapes on the dev split (ehi.train.tree_shape) -> Parquet + Markdown."""

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

import pyarrow as pa

from ehi.data.dataset import Dataset
from ehi.model.embed import load_array
from ehi.core.io import atomic_path, write_parquet
from ehi.core.unfinished import hold
from ehi.train.tree_shape import choose, compare_shapes, pairs_of, summary_markdown

log = setup(snakemake)
attempt = hold(snakemake)  # its update() outputs: removed once they are written (ehi/core/unfinished.py)
inp, out, t = snakemake.input, snakemake.output, snakemake.params.tuning
dataset = Dataset.read(snakemake.params.data_dir)
train = pairs_of(dataset.queries, dataset.qrels, dataset.corpus.doc_id, "train")
dev = pairs_of(dataset.queries, dataset.qrels, dataset.corpus.doc_id, "dev")
if len(dev[0]) == 0:
    raise SystemExit(f"dataset {dataset.name!r} has no judged dev queries: set dataset.dev_fraction to carve some")
table = compare_shapes(load_array(inp.corpus), load_array(inp.queries), train, dev,
                       [tuple(s) for s in t["tree_shapes"]], t["fraction"], t["steps"], range(t["seeds"]))
write_parquet(pa.Table.from_pandas(table, preserve_index=False), out.table, {"kind": "dev_tree_shape", "tuning": t})
chosen = choose(table)
with atomic_path(out.md) as tmp:
    tmp.write_text(summary_markdown(table, t["fraction"], chosen))
attempt.unlink()
log.info("chosen on dev: height=%d, branching=%d", *chosen)
