"""Rule dev_choice: the grid point each model's training is best at on dev (ehi.report.dev_choice)."""

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

from ehi.core.io import atomic_path, read_table
from ehi.report.dev_choice import dev_choice, dev_choice_markdown

log = setup(snakemake)
logs = {tuple(key): read_table(path) for key, path in zip(snakemake.params.logs, snakemake.input)}
table = dev_choice(logs)
with atomic_path(snakemake.output.csv) as tmp:
    table.to_csv(tmp, index=False, float_format="%.4f")
with atomic_path(snakemake.output.md) as tmp:
    tmp.write_text(dev_choice_markdown(table))
