"""The one script every benchmark rule runs: dispatch on the rule's name, write its Parquet outputs.

Thin on purpose (workflow/scripts style): read params, call one ``benchmarks`` function, write.
"""

import logging
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821 (the repo root: `benchmarks`)
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", force=True,
                    handlers=[logging.FileHandler(snakemake.log[0], mode="w"), logging.StreamHandler()])  # noqa: F821

from benchmarks import cli  # noqa: E402

cli.RULES[snakemake.rule](dict(snakemake.params.settings), dict(snakemake.output), snakemake.threads)  # noqa: F821
