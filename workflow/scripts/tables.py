"""Rule tables: every table (Markdown, LaTeX, CSV) and figure (PNG) from the cached results."""

from pathlib import Path

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

from ehi.core.staleness import describe, stale_results
from ehi.core.unfinished import hold
from ehi.report.tables import ReportInputs, ReportSettings, build_report

log = setup(snakemake)
p, inp, out = snakemake.params, snakemake.input, snakemake.output
attempt = hold(snakemake)  # removed only once every table and figure is in place (ehi/core/unfinished.py)
stale = stale_results(p.results_dir)
if stale:  # rendered all the same (a fresh clone renders what is cached), but never silently
    log.warning(describe(stale))
inputs = ReportInputs.of_rule(inp, p)  # each file beside the variant the rule names it for
settings = ReportSettings.from_params(p)  # by name: evaluation's report keys are params only where set
build_report(inputs, settings, Path(out.kmr).parent, out.figures)
attempt.unlink()
