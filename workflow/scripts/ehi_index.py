"""Rule ehi_index: assign every document to its leaf; store documents sorted by leaf."""

from pathlib import Path

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

import pandas as pd

from ehi.model.tree_stats import leaf_health
from ehi.model.embed import load_array
from ehi.search.tree_index import EHIIndex
from ehi.model.tree import load_indexer
from ehi.core.io import write_table
from ehi.core.unfinished import hold

log = setup(snakemake)
attempt = hold(snakemake)  # its update() outputs: removed once they are written (ehi/core/unfinished.py)
inp, out = snakemake.input, snakemake.output
index = EHIIndex.build(load_array(inp.corpus), load_indexer(Path(inp.indexer).parent))
index.save(out.index)
sizes = index.leaf_sizes
status, why = leaf_health(sizes)
# a degenerate tree is still indexed and evaluated (its curve is a result), but never silently:
# the warning goes to the log here and into the leaf-balance table and figure of the report
(log.info if status == "ok" else log.warning)("leaves: %d, %s", len(sizes), why)
leaves = pd.DataFrame({"dataset": snakemake.params.dataset, "variant": snakemake.wildcards.variant,
                       "leaf": range(len(sizes)), "size": sizes})
write_table(leaves, "leaves", out.leaves)
attempt.unlink()
