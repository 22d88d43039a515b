"""Is the reference system (EHI) better than each baseline at the same budget? Paired tests over queries.

For one metric and a list of target budgets, each system enters a comparison at its KMR point
(its largest budget whose mean fraction visited is not above the target, :func:`ehi.evaluate.metrics.kmr_table`).
The reference and a baseline are paired by query (every judged query is in both: a query an index
missed scores 0, it is not dropped), and two two-sided tests are run on the per-query differences:

* ``t-test``: Student's paired t-test (``scipy.stats.ttest_rel``);
* ``randomization``: Fisher's paired randomization test: flip the sign of each query's difference
  at random (seeded) ``n_permutations`` times; p = (1 + #|mean flipped| >= |mean observed|) / (1 + n).

Holm's step-down correction runs over the comparisons of one table (every baseline x target of one
metric), separately for each test; the reference is not a member of the family. Each row also
carries the effect size (Cohen's d_z: mean difference / standard deviation of the differences) and
the t confidence interval of the mean difference. Identical runs give p = 1 by definition (scipy
would return NaN on zero variance).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from scipy import stats

from ehi.evaluate.metrics import GROUP, TARGETS, kmr_table, summarize
from ehi.evaluate.roles import DE, EHI, PRE, ROLE_EXACT, ROLE_TREE, encoder_of, exact_of, is_exact, main_tree
from ehi.core.schemas import schema

TESTS = ("t-test", "randomization")
SCHEMA_COLUMNS = schema("significance").names


def randomization_test(diff: np.ndarray, n_permutations: int = 10_000, seed: int = 0, chunk: int = 1000) -> float:
    """Two-sided p-value of Fisher's paired sign-flip randomization test on differences (n,)."""
    diff = np.asarray(diff, dtype=np.float64)
    observed = abs(diff.mean())
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, n_permutations, chunk):  # chunks bound memory at chunk x n floats
        signs = rng.choice((-1.0, 1.0), size=(min(chunk, n_permutations - start), len(diff)))
        hits += int((np.abs(signs @ diff / len(diff)) >= observed - 1e-12).sum())
    return (hits + 1) / (n_permutations + 1)


def holm(p_values) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values (step-down, monotone, capped at 1)."""
    p = np.asarray(p_values, dtype=np.float64)
    order = np.argsort(p, kind="stable")
    scaled = (len(p) - np.arange(len(p))) * p[order]  # (m - i) * p_(i), i from 0
    adjusted = np.empty_like(p)
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return adjusted


def paired_tests(a: np.ndarray, b: np.ndarray, n_permutations: int = 10_000, seed: int = 0,
                 confidence: float = 0.95) -> dict:
    """Both tests, the effect size and the CI of mean(a - b) for paired per-query values."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    diff = a - b
    sd = diff.std(ddof=1) if len(diff) > 1 else 0.0
    if sd == 0.0:  # constant difference: no variance to test against
        p_t = 1.0 if diff.mean() == 0 else 0.0
        ci = (diff.mean(), diff.mean())
    else:
        res = stats.ttest_rel(a, b)
        p_t = float(res.pvalue)
        ci = tuple(res.confidence_interval(confidence))
    return {
        "mean_a": a.mean(), "mean_b": b.mean(), "delta": diff.mean(),
        "p_t-test": p_t, "p_randomization": randomization_test(diff, n_permutations, seed),
        "effect_size": diff.mean() / sd if sd > 0 else 0.0,
        "ci_low": float(ci[0]), "ci_high": float(ci[1]), "n_queries": len(diff),
    }


def _values_at(per_query: pd.DataFrame, point: pd.Series, metric: str) -> pd.Series:
    """Per-query values (indexed by query_id) of the search a KMR point names."""
    mask = (per_query.dataset == point.dataset) & (per_query.metric == metric)
    for col in GROUP:
        mask &= per_query[col] == point[col]
    return per_query[mask].set_index("query_id").value


def _point(kmr: pd.DataFrame, dataset: str, system: str, target: float) -> pd.Series | None:
    """A system's KMR point at a target, or None when it has no point that cheap."""
    row = kmr[(kmr.dataset == dataset) & (kmr.system == system) & (kmr.target == target)]
    return None if row.empty or np.isnan(row.frac_visited.iloc[0]) else row.iloc[0]


def _compare(per_query, ref: pd.Series, other: pd.Series, metric: str, n_permutations: int, seed: int,
             confidence: float) -> list[dict]:
    """Rows (one per test) comparing two KMR points on their common queries."""
    a, b = _values_at(per_query, ref, metric), _values_at(per_query, other, metric)
    common = a.index.intersection(b.index)
    res = paired_tests(a[common].to_numpy(), b[common].to_numpy(), n_permutations, seed, confidence)
    base = {"dataset": ref.dataset, "metric": metric, "budget": float(ref.target), "system_a": ref.system,
            "system_b": other.system, "mean_a": res["mean_a"], "mean_b": res["mean_b"], "delta": res["delta"],
            "budget_a": ref.frac_visited, "budget_b": other.frac_visited, "effect_size": res["effect_size"],
            "ci_low": res["ci_low"], "ci_high": res["ci_high"], "n_queries": res["n_queries"], "seed": seed}
    return [{**base, "test": test, "p_value": res[f"p_{test}"],
             "n_permutations": n_permutations if test == "randomization" else 0} for test in TESTS]


def significance_table(per_query: pd.DataFrame, summary: pd.DataFrame, metric: str, reference: str,
                       baselines=None, targets=TARGETS, variant: str = "main", n_permutations: int = 10_000,
                       seed: int = 0, alpha: float = 0.05, confidence: float = 0.95) -> pd.DataFrame:
    """The ``significance`` table of ``reference`` vs each baseline at each target budget.

    One row per (dataset, target, baseline, test): the schema's columns plus budget_a / budget_b
    (the mean fractions actually visited), effect_size, ci_low, ci_high, n_queries, n_permutations
    and seed. Comparisons where either system has no point under the target are left out.
    For EHI's exact search against the DE's, call it with EHI's exhaustive search as the reference,
    the DE's as the one baseline and targets=(1.0,): a table (and a Holm family) of its own.
    """
    per_query = per_query[per_query.variant == variant]
    kmr = kmr_table(summary[summary.variant == variant], targets, metric)
    records = []
    for dataset in kmr.dataset.unique():
        systems = kmr[kmr.dataset == dataset].system.unique() if baselines is None else baselines
        for target in targets:
            ref = _point(kmr, dataset, reference, target)
            for system in systems if ref is not None else ():
                other = None if system == reference else _point(kmr, dataset, system, target)
                if other is not None:
                    records += _compare(per_query, ref, other, metric, n_permutations, seed, confidence)
    out = pd.DataFrame(records)
    if out.empty:
        return out
    out["p_adjusted"] = out.groupby(["dataset", "test"]).p_value.transform(holm)
    out["significant"] = out.p_adjusted < alpha
    return out[SCHEMA_COLUMNS + [c for c in out.columns if c not in SCHEMA_COLUMNS]]


def significance_report(per_query: pd.DataFrame, metrics, targets=TARGETS, n_permutations: int = 10_000,
                        seed: int = 0, alpha: float = 0.05, reference: str | None = None,
                        more_references: dict[str, str] | None = None, pre_baselines: bool = False) -> pd.DataFrame:
    """The paper's two questions for every metric, as one table with a ``family`` column.

    ``budgets``: EHI's tree (``reference``; by default the EHI encoder's first tree search present,
    :func:`ehi.evaluate.roles.main_tree`) against every other trained system at each target budget
    (one Holm family per metric and test); ``exact``: EHI's exhaustive search against the DE's (a
    family of its own). Which systems are trees and which are exact the registry says
    (:mod:`ehi.evaluate.roles`), never their names. The untrained encoder (``pre+``) is a reference
    point, not a baseline, and is left out where a trained encoder is searched beside it; with
    ``pre_baselines`` (``evaluation.pre_baselines``: no encoder trains, the searches of the vectors
    as given are the run's off-the-shelf indexes) its searches are baselines like any other. ``more_references`` ({system: "tree", "exact" or
    another role}: the k-means-started tree's name mapped to "tree", say; the variant systems of
    :mod:`ehi.evaluate.variant_systems`) asks the same question of each of those systems, each in
    families of its own: the same tests as EHI's, never pooled with them.
    """
    summary = summarize(per_query)
    present = set(per_query.system)
    extra = set(more_references or {})
    main = present - extra
    reference = reference or main_tree(main)
    ehi_exact, de_exact = exact_of(main, EHI), exact_of(main, DE)
    questions = [("budgets", reference, targets)] if reference else []
    questions += [(ROLE_EXACT, ehi_exact, (1.0,))] if ehi_exact else []
    asked = {ROLE_TREE: ("budgets", targets), ROLE_EXACT: (ROLE_EXACT, (1.0,))}  # the question of each role
    for name, role in (more_references or {}).items():  # any other role: in the table, in no family
        if role in asked:
            questions.append((asked[role][0], name, asked[role][1]))
    frames = []
    for metric in metrics:
        for family, ref, tgts in questions:
            if family == "budgets":  # the paper's systems; a variant system also against EHI's own tree
                others = sorted(s for s in present if s != ref and s not in extra
                                and (pre_baselines or encoder_of(s) != PRE))
            else:
                others = [de_exact] if de_exact else []
            if ref not in present or not set(others) & present:
                continue
            table = significance_table(per_query, summary, metric, ref, [s for s in others if s != ref], tgts,
                                       n_permutations=n_permutations, seed=seed, alpha=alpha)
            frames.append(table.assign(family=family))
    if not frames:  # no EHI system, or nothing to set it against: a table with no rows, not a failure
        return pd.DataFrame({**{c: pd.Series(dtype=object) for c in SCHEMA_COLUMNS}, "family": pd.Series(dtype=object)})
    return pd.concat(frames, ignore_index=True)


def ablation_significance(per_query: pd.DataFrame, ablations: dict[str, list[str]], metrics, budget: float = 0.1,
                          n_permutations: int = 10_000, seed: int = 0, alpha: float = 0.05,
                          confidence: float = 0.95, searches=None) -> pd.DataFrame:
    """Each ablation variant against the main setting, paired over queries.

    ``searches``: (system, the fraction of documents it is read at) of each compared search (the
    config's ablation_systems, :func:`ehi.evaluate.ablation_tests.ablation_searches`); by default every system
    in ``per_query``, a budgeted one at its KMR point under ``budget`` and an exhaustive one at 1.0
    (the registry says which). ``system_a`` / ``system_b`` are the same system, ``variant`` vs ``main``. Holm's correction
    runs over one ablation's comparisons (every variant x search) for each metric and test: one
    family is one ablation table's column of p-values. Variants without per-query results are skipped.
    """
    if per_query.empty or not ablations:
        return pd.DataFrame()
    summary = summarize(per_query)
    run = set(summary.variant)
    if "main" not in run:
        return pd.DataFrame()
    kmrs = {metric: kmr_table(summary, [budget, 1.0], metric) for metric in metrics}  # once per metric
    searches = searches or [(s, 1.0 if is_exact(s) else budget) for s in sorted(set(per_query.system))]
    records = []
    for name, variants in ablations.items():
        for metric, kmr in kmrs.items():
            main = kmr[kmr.variant == "main"]
            for dataset, variant, (system, target) in itertools.product(
                    kmr.dataset.unique(), [v for v in variants if v in run], searches):
                ref = _point(kmr[kmr.variant == variant], dataset, system, target)
                base = _point(main, dataset, system, target)
                if ref is not None and base is not None:
                    records += [{**row, "ablation": name, "variant": variant}
                                for row in _compare(per_query, ref, base, metric, n_permutations, seed, confidence)]
    if not records:
        return pd.DataFrame()
    out = pd.DataFrame(records)
    out["p_adjusted"] = out.groupby(["dataset", "ablation", "metric", "test"]).p_value.transform(holm)
    out["significant"] = out.p_adjusted < alpha
    return out
