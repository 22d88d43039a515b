"""Rule across_datasets: one table (Markdown, LaTeX, CSV) and one figure with a row / a panel per dataset."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir)))  # noqa: F821 (snakemake is injected)
from _common import setup  # noqa: E402

from ehi.report.across import build_across  # noqa: E402

log = setup(snakemake)  # noqa: F821
out = snakemake.output  # noqa: F821
# every dataset's results sit under one root: results/<dataset>/significance.parquet
root = Path(snakemake.input.significance[0]).parent.parent  # noqa: F821
build_across(root, snakemake.params.datasets, Path(out.md).with_suffix(""), out.figure,  # noqa: F821
             seeding=snakemake.params.seeding)  # noqa: F821
