"""Rule trec_run: one system's run (every budget of its sweep) as TREC run files, one per budget."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir)))  # noqa: F821 (snakemake is injected)
from _common import setup  # noqa: E402

from ehi.core.io import read_table  # noqa: E402
from ehi.evaluate.trec import write_trec_runs  # noqa: E402

log = setup(snakemake)  # noqa: F821
paths = write_trec_runs(read_table(snakemake.input[0], "run"), snakemake.output[0])  # noqa: F821
log.info("wrote %d TREC run files to %s", len(paths), snakemake.output[0])  # noqa: F821
