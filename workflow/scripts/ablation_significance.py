"""Rule ablation_significance: each ablation variant against the main setting (ehi.evaluate.ablation_tests)."""

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

from ehi.core.unfinished import hold
from ehi.evaluate.ablation_tests import write_ablation_tests
from ehi.evaluate.config import EvaluationConfig

log = setup(snakemake)
attempt = hold(snakemake)  # its update() output: removed once it is written (ehi/core/unfinished.py)
p = snakemake.params
cfg = EvaluationConfig.from_dict(p.evaluation)
write_ablation_tests(snakemake.input.per_query, snakemake.output[0], p.ablations, cfg.metrics, p.ablation_systems,
                     cfg.budget_axis, cfg.n_permutations, cfg.seed, cfg.alpha,
                     snakemake.input.qrels[0] if snakemake.input.qrels else None)
attempt.unlink()
