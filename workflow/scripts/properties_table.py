"""Rule properties_table: the gain beside what is measured of each dataset before training."""

from pathlib import Path

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

from ehi.core.unfinished import hold
from ehi.report.gain_properties import build_properties, read_matched

log = setup(snakemake)
attempt = hold(snakemake)  # its update() outputs: removed once they are written (ehi/core/unfinished.py)
matched = read_matched(snakemake.input.matched)
build_properties(Path(snakemake.input.gains), [Path(p) for p in snakemake.input.properties], matched,
                 Path(snakemake.output.md).with_suffix(""), Path(snakemake.output.figure))
attempt.unlink()
