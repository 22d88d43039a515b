"""Rule summarize: the KMR summary (mean over queries per search) of one variant (timings stay in the searches' qps tables)."""

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

import pandas as pd

from ehi.evaluate.metrics import summarize
from ehi.core.io import write_table
from ehi.core.unfinished import hold
from ehi.evaluate.result_checks import read_per_query

log = setup(snakemake)
attempt = hold(snakemake)  # its update() outputs: removed once they are written (ehi/core/unfinished.py)
inp = snakemake.input
# each table checked against its split's judged queries (ehi/evaluate/result_checks.py)
per_query = pd.concat(read_per_query(inp.per_query, inp.qrels[0] if inp.qrels else None), ignore_index=True)
write_table(summarize(per_query), "summary", snakemake.output[0])
attempt.unlink()
