"""Rule write_tower: a `towers` entry's tower over its vectors, at its start (no weights yet)."""

from pathlib import Path

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

from ehi.core.unfinished import hold
from ehi.model.tower import write_tower_spec

log = setup(snakemake)
attempt = hold(snakemake)  # its update() output: removed once it is in place (ehi/core/unfinished.py)
p = snakemake.params
write_tower_spec(Path(snakemake.output[0]).parent, snakemake.input.vectors, kind=p.kind, shared=p.shared, hidden=p.hidden)
attempt.unlink()
