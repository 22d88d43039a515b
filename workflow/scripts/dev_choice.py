"""Rule dev_choice: the grid point each model's training is best at on dev (ehi.report.dev_choice)."""

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

from ehi.core.io import read_table
from ehi.core.unfinished import hold
from ehi.report.dev_choice import dev_choice, dev_choice_markdown
from ehi.report.report_files import write_table_pair

log = setup(snakemake)
attempt = hold(snakemake)  # its update() outputs: removed once they are written (ehi/core/unfinished.py)
logs = {tuple(key): read_table(path) for key, path in zip(snakemake.params.logs, snakemake.input)}
table = dev_choice(logs)
write_table_pair(table, snakemake.output.csv, dev_choice_markdown(table), snakemake.output.md)
attempt.unlink()
