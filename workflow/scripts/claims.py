"""Rule claims: the paper's claims against the cached significance table -> Markdown + CSV."""

from pathlib import Path

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

from ehi.core.unfinished import hold
from ehi.report.claims import main

log = setup(snakemake)
attempt = hold(snakemake)  # its update() outputs: removed once they are written (ehi/core/unfinished.py)
out = Path(snakemake.output.md).with_suffix("")
code = main([str(Path(snakemake.input.significance).parent), "--claims", snakemake.input.claims, "--out", str(out)])
if code:
    raise SystemExit(code)
attempt.unlink()
