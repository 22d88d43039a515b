"""Rule world_fit: datasets' geometry and KMR shapes side by side (ehi.report.world_fit)."""

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

import json

from ehi.core.io import read_table
from ehi.core.unfinished import hold
from ehi.report.report_files import check_same_datasets, write_table_pair
from ehi.report.world_fit import kmr_shape, world_fit_markdown, world_fit_table

log = setup(snakemake)
attempt = hold(snakemake)  # its update() outputs: removed once they are written (ehi/core/unfinished.py)
names = list(snakemake.params.datasets)
check_same_datasets(snakemake.output.csv, names)  # one table name for every config: the committed one is kept
facts = {n: json.loads(open(f).read()) for n, f in zip(names, snakemake.input.geometry)}
shapes = {n: kmr_shape(read_table(f)) for n, f in zip(names, snakemake.input.summaries)}
table = world_fit_table(facts, shapes)
write_table_pair(table, snakemake.output.csv, world_fit_markdown(table), snakemake.output.md)
attempt.unlink()
