"""Rule dev_grid: the point of a setting's grid its model is best at on dev (ehi.report.dev_choice.grid_choice)."""

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

from ehi.core.io import atomic_path, read_table, write_json
from ehi.report.dev_choice import grid_choice

log = setup(snakemake)
points = snakemake.params.points
table, choice = grid_choice({p: read_table(f) for p, f in zip(points, snakemake.input)}, points)
log.info("%s: chose %s (dev %.4f) of %d points", snakemake.wildcards.model, choice["point"], choice["dev_value"], len(points))
with atomic_path(snakemake.output.table) as tmp:
    table.to_parquet(tmp, index=False)
write_json(choice, snakemake.output.choice)
