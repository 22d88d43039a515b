"""Rule dev_leaf_count: the tree's leaf count chosen on the dev split (ehi.train.leaf_count) -> JSON, Parquet, Markdown."""

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

import pyarrow as pa

from ehi.core.io import atomic_path, write_json, write_parquet
from ehi.core.unfinished import hold
from ehi.data.dataset import Dataset
from ehi.evaluate.tree_recipe import split_arrays
from ehi.model.embed import load_array
from ehi.search.tune import default_grid
from ehi.train.leaf_count import choose_leaf_count, summary_markdown

log = setup(snakemake)
attempt = hold(snakemake)  # its update() outputs: removed once they are written (ehi/core/unfinished.py)
inp, out, params = snakemake.input, snakemake.output, snakemake.params
dataset = Dataset.read(params.data_dir)
doc_emb = load_array(inp.corpus)
dev_q, dev_rel, _, _ = split_arrays(dataset, load_array(inp.queries), "dev")
if not len(dev_q):
    raise SystemExit(f"dataset {dataset.name!r} has no judged dev queries: branching auto needs a dev split")
grid = params.ivf_nlist or [g["nlist"] for g in default_grid("faiss-ivf", len(doc_emb))]
chosen, table = choose_leaf_count(doc_emb, dev_q, dev_rel, grid, cost=getattr(params, "cost", "documents"))
write_parquet(pa.Table.from_pandas(table, preserve_index=False), out.table, {"kind": "dev_leaf_count", "grid": grid})
with atomic_path(out.md) as tmp:
    tmp.write_text(summary_markdown(table, chosen, len(doc_emb)))
write_json({"branching": chosen, "grid": sorted(set(int(x) for x in table.leaves)), "dev_queries": len(dev_q)}, out.choice)
attempt.unlink()
log.info("leaf count chosen on dev: %d (grid %s)", chosen, sorted(set(table.leaves)))
