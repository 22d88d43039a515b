"""Rule claims: the paper's claims against the cached significance table -> Markdown + CSV."""

from pathlib import Path

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

from ehi.core.unfinished import hold
from ehi.report.claims import main

log = setup(snakemake)
attempt = hold(snakemake)  # its update() outputs: removed once they are written (ehi/core/unfinished.py)
out = Path(snakemake.output.md).with_suffix("")
notes = ["--noise-notes"] if getattr(snakemake.params, "noise_notes", False) else []  # evaluation.noise_notes
claims = Path(snakemake.scriptdir).resolve().parents[1] / "ehi" / "report" / "claims.yaml"  # the rule's params carry its digest
code = main([str(Path(snakemake.input.significance).parent), "--claims", str(claims), "--out", str(out), *notes])
if code:
    raise SystemExit(code)
attempt.unlink()
