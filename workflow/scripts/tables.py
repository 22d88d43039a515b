"""Rule tables: every table (Markdown, LaTeX, CSV) and figure (PNG) from the cached results."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir)))  # noqa: F821 (snakemake is injected)
from _common import setup  # noqa: E402

from ehi.core.staleness import describe, stale_results  # noqa: E402
from ehi.report.missing import attempt_marker  # noqa: E402
from ehi.report.tables import build_report  # noqa: E402

log = setup(snakemake)  # noqa: F821
p, out = snakemake.params, snakemake.output  # noqa: F821
attempt = attempt_marker(Path(snakemake.log[0]).parent)  # noqa: F821
attempt.parent.mkdir(parents=True, exist_ok=True)
attempt.touch()  # removed only once every table and figure is in place
stale = stale_results(p.results_dir)
if stale:  # rendered all the same (a fresh clone renders what is cached), but never silently
    log.warning(describe(stale))
build_report(p.results_dir, p.dataset, p.variants, p.ablations, p.metrics, p.targets,
             Path(out.kmr).parent, out.figures, p.n_permutations, p.seed, p.alpha, p.variant_systems,
             p.seed_replicas, p.main_seed)
attempt.unlink()
