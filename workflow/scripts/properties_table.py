"""Rule properties_table: the gain beside what is measured of each dataset before training."""

from pathlib import Path

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

from ehi.core.unfinished import hold
from ehi.report.gain_properties import build_properties, read_matched

log = setup(snakemake)
attempt = hold(snakemake)  # its update() outputs: removed once they are written (ehi/core/unfinished.py)
# each file beside the dataset the rule names it for
matched = read_matched(dict(zip(snakemake.params.benchmarked, snakemake.input.matched, strict=True)))
properties = dict(zip(snakemake.params.measured, map(Path, snakemake.input.properties), strict=True))
build_properties(Path(snakemake.input.gains), properties, matched,
                 Path(snakemake.output.md).with_suffix(""), Path(snakemake.output.figure))
attempt.unlink()
