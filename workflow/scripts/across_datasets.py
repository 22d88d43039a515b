"""Rule across_datasets: one table (Markdown, LaTeX, CSV) and one figure with a row / a panel per dataset."""

from pathlib import Path

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

from ehi.core.unfinished import hold
from ehi.report.across import build_across

log = setup(snakemake)
attempt = hold(snakemake)  # its update() outputs: removed once they are written (ehi/core/unfinished.py)
out = snakemake.output
# every dataset's results sit under one root: results/<dataset>/significance.parquet
root = Path(snakemake.input.significance[0]).parent.parent
build_across(root, snakemake.params.datasets, Path(out.md).with_suffix(""), out.figure,
             seeding=snakemake.params.seeding)
attempt.unlink()
