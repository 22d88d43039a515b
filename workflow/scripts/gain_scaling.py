"""Rule gain_scaling: the gain table read against N and training queries a leaf."""

from pathlib import Path

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

from ehi.core.unfinished import hold
from ehi.report.gain import GainSystems
from ehi.report.gain_scaling import build_gain_scaling

log = setup(snakemake)
attempt = hold(snakemake)  # its update() outputs: removed once they are written (ehi/core/unfinished.py)
build_gain_scaling(Path(snakemake.input[0]), Path(snakemake.output.md).with_suffix(""), Path(snakemake.output.figure),
                   GainSystems.from_config(snakemake.params.systems))
attempt.unlink()
