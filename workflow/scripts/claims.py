"""Rule claims: the paper's claims against the cached significance table -> Markdown + CSV."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir)))  # noqa: F821 (snakemake is injected)
from _common import setup  # noqa: E402

from ehi.report.claims import main  # noqa: E402

log = setup(snakemake)  # noqa: F821
out = Path(snakemake.output.md).with_suffix("")  # noqa: F821
code = main([str(Path(snakemake.input.significance).parent), "--claims", snakemake.input.claims, "--out", str(out)])  # noqa: F821
if code:
    raise SystemExit(code)
