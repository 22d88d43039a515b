"""Rule dev_grid_table: every point of every grid chosen on dev (ehi.report.dev_choice.grid_markdown)."""

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

from ehi.core.io import atomic_path, read_table
from ehi.report.dev_choice import grid_markdown, grid_rows

log = setup(snakemake)
tables = {tuple(key): read_table(path) for key, path in zip(snakemake.params.grids, snakemake.input)}
with atomic_path(snakemake.output.csv) as tmp:
    grid_rows(tables).to_csv(tmp, index=False, float_format="%.4f")
with atomic_path(snakemake.output.md) as tmp:
    tmp.write_text(grid_markdown(tables))
