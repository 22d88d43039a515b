"""Rule tables: every table (Markdown, LaTeX, CSV) and figure (PNG) from the cached results."""

from pathlib import Path

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

from ehi.core.staleness import describe, stale_results
from ehi.report.missing import attempt_marker
from ehi.report.tables import build_report

log = setup(snakemake)
p, out = snakemake.params, snakemake.output
attempt = attempt_marker(Path(snakemake.log[0]).parent)
attempt.parent.mkdir(parents=True, exist_ok=True)
attempt.touch()  # removed only once every table and figure is in place
stale = stale_results(p.results_dir)
if stale:  # rendered all the same (a fresh clone renders what is cached), but never silently
    log.warning(describe(stale))
build_report(p.results_dir, p.dataset, p.variants, p.ablations, p.metrics, p.targets,
             Path(out.kmr).parent, out.figures, p.n_permutations, p.seed, p.alpha, p.variant_systems,
             p.seed_replicas, p.main_seed, p.ablation_systems, p.systems)
attempt.unlink()
