"""Rule gain_table: the tree's gain over k-means IVF at equal work over the datasets of `gain:`."""

from pathlib import Path

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

from ehi.core.unfinished import hold
from ehi.report.gain import GainDataset, GainSystems, build_gain, leaf_count

log = setup(snakemake)
attempt = hold(snakemake)  # its update() outputs: removed once they are written (ehi/core/unfinished.py)
datasets = []
for facts, (name, spec) in zip(snakemake.input.facts, snakemake.params.datasets.items()):
    results = Path(facts).parent
    assert results.name == name, (results, name)  # the facts are listed in the datasets' order
    per_query = tuple(Path(p) for p in snakemake.input.per_query if Path(p).resolve().is_relative_to(results.resolve()))
    datasets.append(GainDataset(results, leaf_count(results, spec["branching"]), spec["variant_systems"],
                                int(spec["main_seed"]), per_query, spec.get("seed_replicas", {})))
build_gain(datasets, Path(snakemake.output.md).with_suffix(""), Path(snakemake.output.figure),
           GainSystems.from_config(snakemake.params.systems))
attempt.unlink()
