"""Rule ehi_index: assign every document to its leaf; store documents sorted by leaf."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir)))  # noqa: F821 (snakemake is injected)
from _common import setup  # noqa: E402

import pandas as pd  # noqa: E402

from ehi.model.tree_stats import leaf_health  # noqa: E402
from ehi.model.embed import load_array  # noqa: E402
from ehi.search.tree_index import EHIIndex  # noqa: E402
from ehi.model.tree import load_indexer  # noqa: E402
from ehi.core.io import write_table  # noqa: E402

log = setup(snakemake)  # noqa: F821
inp, out = snakemake.input, snakemake.output  # noqa: F821
index = EHIIndex.build(load_array(inp.corpus), load_indexer(Path(inp.indexer).parent))
index.save(out.index)
sizes = index.leaf_sizes
status, why = leaf_health(sizes)
# a degenerate tree is still indexed and evaluated (its curve is a result), but never silently:
# the warning goes to the log here and into the leaf-balance table and figure of the report
(log.info if status == "ok" else log.warning)("leaves: %d, %s", len(sizes), why)
leaves = pd.DataFrame({"dataset": snakemake.params.dataset, "variant": snakemake.wildcards.variant,  # noqa: F821
                       "leaf": range(len(sizes)), "size": sizes})
write_table(leaves, "leaves", out.leaves)
