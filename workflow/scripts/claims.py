"""Rule claims: the paper's claims against the cached significance table -> Markdown + CSV."""

from pathlib import Path

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

from ehi.report.claims import main

log = setup(snakemake)
out = Path(snakemake.output.md).with_suffix("")
code = main([str(Path(snakemake.input.significance).parent), "--claims", snakemake.input.claims, "--out", str(out)])
if code:
    raise SystemExit(code)
