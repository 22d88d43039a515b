"""The ``evaluation`` section of the config as a typed object: metrics, budgets, significance."""

from __future__ import annotations

from dataclasses import dataclass, field

from ehi.core.config import SEED_MAX, Section, bounded


def _propensities() -> tuple[str, ...]:
    from ehi.evaluate.xmc import PROPENSITY_AB  # here: the module imports scipy

    return tuple(PROPENSITY_AB)


@dataclass(frozen=True)
class EvaluationConfig(Section):
    """The ``evaluation:`` block of the config; the schema's ``evaluation:`` is generated from it (ehi.schema_file).

    A rule gets the keys it reads only; the others keep these defaults."""

    section = "evaluation"

    split: str = "test"  # the evaluated query split
    metrics: list[str] = field(default_factory=lambda: ["ndcg@10", "mrr@10", "recall@10", "recall@100"])
    propensity: str = bounded("other", choices=_propensities)  # psp@k's (A, B)
    targets: list[float] = bounded(default_factory=lambda: [0.01, 0.02, 0.05, 0.1, 0.2, 1.0], exclusive_minimum=0,
                                   maximum=1)
    n_permutations: int = bounded(10000, minimum=100)  # of Fisher's randomization test
    seed: int = bounded(0, minimum=0, maximum=SEED_MAX)
    alpha: float = bounded(0.05, exclusive_minimum=0, maximum=0.5)  # after Holm correction
    # {name: "<variant>/<system>"}: an ablation variant's system reported beside the main ones
    variant_systems: dict[str, str] = field(default_factory=dict)
    budget_axis: str = bounded("documents", choices=("documents", "work"))  # what a budget counts in the reports: documents scored, or work (ehi.core.work)
    noise_notes: bool = False  # say where a result is noise (ehi.report.noise)
    pre_baselines: bool = False  # the searches of the vectors as given are baselines (ehi.evaluate.stats)
