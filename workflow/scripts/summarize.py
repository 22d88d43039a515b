"""Rule summarize: the KMR summary (mean over queries per search) of one variant (timings stay in the searches' qps tables)."""

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

import pandas as pd

from ehi.evaluate.metrics import summarize
from ehi.core.io import read_table, write_table
from ehi.core.unfinished import hold

log = setup(snakemake)
attempt = hold(snakemake)  # its update() outputs: removed once they are written (ehi/core/unfinished.py)
inp = snakemake.input
per_query = pd.concat([read_table(f, "per_query") for f in inp.per_query], ignore_index=True)
write_table(summarize(per_query), "summary", snakemake.output[0])
attempt.unlink()
