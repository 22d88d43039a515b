"""The ``evaluation`` section of the config as a typed object: metrics, budgets, significance."""

from __future__ import annotations

from dataclasses import dataclass, field

from ehi.core.config import Section


@dataclass(frozen=True)
class EvaluationConfig(Section):
    """Mirrors ``evaluation:`` in workflow/schemas/config.schema.yaml (tests/test_config_schema.py).

    A rule gets the keys it reads only; the others keep these defaults."""

    section = "evaluation"

    split: str = "test"  # the evaluated query split
    metrics: list[str] = field(default_factory=lambda: ["ndcg@10", "mrr@10", "recall@10", "recall@100"])
    propensity: str = "other"  # psp@k's (A, B), ehi.evaluate.xmc.PROPENSITY_AB
    targets: list[float] = field(default_factory=lambda: [0.01, 0.02, 0.05, 0.1, 0.2, 1.0])
    n_permutations: int = 10000  # of Fisher's randomization test
    seed: int = 0
    alpha: float = 0.05  # after Holm correction
    # {name: "<variant>/<system>"}: an ablation variant's system reported beside the main ones
    variant_systems: dict[str, str] = field(default_factory=dict)
    budget_axis: str = "documents"  # what a budget counts in the reports: documents scored, or work (ehi.core.work)
    noise_notes: bool = False  # say where a result is noise (ehi.report.noise)
