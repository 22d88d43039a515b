"""The ablation tables' tests: each ablation variant against the main setting, paired over queries,
at the searches the config's ``ablation_systems`` name (:func:`ablation_searches`).

Rule ``ablation_significance`` (workflow/rules/evaluate.smk) writes them as
``results/<dataset>/ablation_significance.parquet``, a significance table (its schema's columns,
then ``ablation``, ``variant`` and the test's details), which the report reads as a declared
input: rendering tests nothing.
"""

from __future__ import annotations

import os

import pandas as pd

from ehi.core.io import write_table
from ehi.core.schemas import schema
from ehi.core.work import on_budget_axis
from ehi.evaluate.result_checks import read_per_query
from ehi.evaluate.stats import ablation_significance
from ehi.search.registry import budgeted

ABLATION_BUDGET = 0.1  # ablations compare a budgeted search (EHI's tree) at this fraction of documents scored


def ablation_searches(systems) -> list[tuple[str, str, float]]:
    """(system, its label, the fraction of documents it is read at) of each ablation system: a
    budgeted search (the registry says which) at ABLATION_BUDGET, an exhaustive one at 1.0; the label
    is its search kind ("tree", "tree-pq", "exact")."""
    return [(s, s.split("+", 1)[1], ABLATION_BUDGET if budgeted(s) else 1.0) for s in systems]


def ablation_tests(per_query: pd.DataFrame, ablations: dict[str, list[str]], metrics, systems,
                   n_permutations: int = 10_000, seed: int = 0, alpha: float = 0.05) -> pd.DataFrame:
    """The tests of every ablation variant with per-query results against the main setting; with
    the significance schema's columns (and ``ablation``, ``variant``) where there is none to run."""
    sig = ablation_significance(per_query, ablations, metrics, ABLATION_BUDGET, n_permutations=n_permutations,
                                seed=seed, alpha=alpha, searches=[(s, t) for s, _, t in ablation_searches(systems)])
    return sig if len(sig) else pd.DataFrame(columns=[*schema("significance").names, "ablation", "variant"])


def write_ablation_tests(per_query: list[str | os.PathLike], out: str | os.PathLike, ablations: dict, metrics,
                         systems, budget_axis: str = "documents", n_permutations: int = 10_000, seed: int = 0,
                         alpha: float = 0.05, qrels: str | os.PathLike | None = None) -> pd.DataFrame:
    """:func:`ablation_tests` of the per-query tables ``per_query`` (the ablation systems' of the main
    setting and each ablation variant), each checked against its split's judged queries in ``qrels``
    (where given: :func:`ehi.evaluate.result_checks.read_per_query`), read on ``budget_axis``,
    written to ``out``."""
    frames = [on_budget_axis(f, budget_axis, str(p)) for p, f in zip(per_query, read_per_query(per_query, qrels))]
    rows = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    table = ablation_tests(rows, ablations, metrics, systems, n_permutations, seed, alpha)
    write_table(table, "significance", out, keep_extra=True, meta={"n_permutations": n_permutations, "seed": seed})
    return table

