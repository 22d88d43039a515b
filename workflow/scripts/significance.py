"""Rule significance: EHI against every baseline at every target budget, and exact vs exact."""

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

import pandas as pd

from ehi.core.io import write_table
from ehi.core.unfinished import hold
from ehi.core.work import on_budget_axis
from ehi.evaluate.config import EvaluationConfig
from ehi.evaluate.result_checks import read_per_query
from ehi.evaluate.stats import significance_report
from ehi.evaluate.seeds import per_query_over_seeds, seed_column, setting_replicas, with_seed_spread
from ehi.evaluate.variant_systems import parse as parse_variant_systems, significance_role, with_variant_systems

log = setup(snakemake)
attempt = hold(snakemake)  # its update() outputs: removed once they are written (ehi/core/unfinished.py)
cfg = EvaluationConfig.from_dict(snakemake.params.evaluation)
inp = snakemake.input
# every table checked against its split's judged queries (ehi/evaluate/result_checks.py)
frames = read_per_query([*inp.per_query, *inp.variant_per_query], inp.qrels[0] if inp.qrels else None)
# evaluation.budget_axis: every pick at a budget reads documents scored, or work (routing counted)
per_query = on_budget_axis(pd.concat(frames[:len(inp.per_query)], ignore_index=True), cfg.budget_axis, "per_query")
# evaluation.variant_systems: an ablation variant's searches (e.g. the k-means-started tree), relabelled
specs = parse_variant_systems(cfg.variant_systems)
seeds = snakemake.params.seeds
variant_rows = on_budget_axis(pd.concat(frames[len(inp.per_query):], ignore_index=True), cfg.budget_axis,
                             "per_query") if specs else None
if seeds:  # relabel each seed replica to its variant (named as rule significance named its inputs), then average each query over seeds
    replicas = setting_replicas(specs, seeds["seeds"], seeds["main_seed"])
    per_query = seed_column(per_query, replicas, seeds["main_seed"])
    variant_rows = seed_column(variant_rows, replicas, seeds["main_seed"]) if specs else None
per_query = with_variant_systems(per_query, [(s, variant_rows) for s in specs])
per_seed = per_query
if seeds:
    log.info("per-query values averaged over training seeds %s", seeds["seeds"])
    per_query = per_query_over_seeds(per_seed, cfg.targets, cfg.metrics)
table = significance_report(per_query, cfg.metrics, cfg.targets, cfg.n_permutations, cfg.seed, cfg.alpha,
                            more_references={s.name: significance_role(s) for s in specs},
                            pre_baselines=cfg.pre_baselines)  # evaluation.pre_baselines: no encoder trains here
if seeds:
    table = with_seed_spread(table, per_seed, cfg.targets, cfg.metrics)
write_table(table, "significance", snakemake.output[0], keep_extra=True, meta={"n_permutations": cfg.n_permutations, "seed": cfg.seed})
attempt.unlink()
