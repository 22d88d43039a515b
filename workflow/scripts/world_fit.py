"""Rule world_fit: datasets' geometry and KMR shapes side by side (ehi.report.world_fit)."""

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

import json

from ehi.core.io import atomic_path, read_table
from ehi.report.world_fit import kmr_shape, world_fit_markdown, world_fit_table

log = setup(snakemake)
names = list(snakemake.params.datasets)
facts = {n: json.loads(open(f).read()) for n, f in zip(names, snakemake.input.geometry)}
shapes = {n: kmr_shape(read_table(f)) for n, f in zip(names, snakemake.input.summaries)}
table = world_fit_table(facts, shapes)
with atomic_path(snakemake.output.csv) as tmp:
    table.to_csv(tmp, index=False, float_format="%.4f")
with atomic_path(snakemake.output.md) as tmp:
    tmp.write_text(world_fit_markdown(table))
