"""Rule summarize: the KMR summary (mean over queries per search) of one variant (timings stay in the searches' qps tables)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir)))  # noqa: F821 (snakemake is injected)
from _common import setup  # noqa: E402

import pandas as pd  # noqa: E402

from ehi.evaluate.metrics import summarize  # noqa: E402
from ehi.core.io import read_table, write_table  # noqa: E402

log = setup(snakemake)  # noqa: F821
inp = snakemake.input  # noqa: F821
per_query = pd.concat([read_table(f, "per_query") for f in inp.per_query], ignore_index=True)
write_table(summarize(per_query), "summary", snakemake.output[0])  # noqa: F821
