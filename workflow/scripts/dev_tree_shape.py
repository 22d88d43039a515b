"""Rule dev_tree_shape: compare tree shapes on the dev split (ehi.train.tree_shape) -> Parquet + Markdown."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir)))  # noqa: F821 (snakemake is injected)
from _common import setup  # noqa: E402

import pyarrow as pa  # noqa: E402

from ehi.data.dataset import Dataset  # noqa: E402
from ehi.model.embed import load_array  # noqa: E402
from ehi.core.io import atomic_path, write_parquet  # noqa: E402
from ehi.train.tree_shape import choose, compare_shapes, pairs_of, summary_markdown  # noqa: E402

log = setup(snakemake)  # noqa: F821
inp, out, t = snakemake.input, snakemake.output, snakemake.params.tuning  # noqa: F821
dataset = Dataset.read(snakemake.params.data_dir)  # noqa: F821
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
log.info("chosen on dev: height=%d, branching=%d", *chosen)
