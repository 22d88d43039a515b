"""Rule data_facts: a prepared dataset's sizes (and a world's knobs) into results/<dataset>/data.json."""

from pathlib import Path

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

from ehi.data.facts import write_data_facts

log = setup(snakemake)
write_data_facts(Path(snakemake.input.manifest).parent, snakemake.output[0], snakemake.params.source or None)
