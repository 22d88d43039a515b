"""Rule compare_check: a run of ``ehi compare`` on this study's vectors beside the study's seed means."""

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

from ehi.report.compare_check import compare_check

log = setup(snakemake)
p = snakemake.params
compare_check(p.run, dict(zip(p.summary_variants, snakemake.input.summaries)), p.seed_replicas, p.variant_systems,
              p.check, p.dataset, snakemake.output.md.removesuffix(".md"))
