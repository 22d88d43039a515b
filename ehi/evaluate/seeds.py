"""Training seeds as a dimension of every reported number: mean and spread over seeds, and per-query
values averaged over seeds for the paired tests.

``train.seeds: [0, 1, 2]`` trains each model of the main setting (and of every variant that
``evaluation.variant_systems`` reports beside it) once per seed. The run of ``train.seed`` is the
variant itself (``main``, ``indexer_init~kmeans``); each other seed is a replica variant with
``seed~S`` as its last path part (``seed~1``, ``indexer_init~kmeans/seed~1``), trained, searched
and evaluated like any variant, so one seed's results are cached and rerun on their own. Each
replica is named with its seed where it is made (:func:`replicas`), and read by that name: no
replica's path is taken apart for its seed.

Across seeds, a system's number at a target budget is the mean over seeds of its KMR value there
(each seed at its own largest point not above the target, as measured: beams and probes are not
nested, so seeds may stop at different points), with the spread (sd and min-max over seeds) beside
it. A system missing a point under the target in any seed has no number there.

The paired tests compare seed-averaged systems: each query's value is the mean over seeds of its
value at each seed's KMR point. The test then asks whether the system, averaged over training
runs, is better on this population of queries; training variance is averaged out rather than
tested against, so every comparison also carries the seed spread of both sides and a flag when the
difference of means lies within it (``within_seed_spread``): such a difference is not evidence,
however small its p-value.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ehi.evaluate.metrics import kmr_table

KMR_POINT = "kmr target"  # budget_param of a seed-averaged point: budget_value is its target


def replica(variant: str, seed: int) -> str:
    """The variant path of ``variant`` trained with another seed: 'main' -> 'seed~1'."""
    return f"seed~{seed}" if variant == "main" else f"{variant}/seed~{seed}"


def replicas(variants, seeds, main_seed: int) -> dict[str, dict[str, int]]:
    """{variant: {its own path: main_seed, then one replica per other seed: its seed}} of each
    seeded variant (iterated, the paths: its own first)."""
    others = [s for s in seeds if s != main_seed]
    return {v: {v: main_seed, **{replica(v, s): s for s in others}} for v in variants}


def setting_replicas(variant_specs, seeds, main_seed: int) -> dict[str, dict[str, int]]:
    """:func:`replicas` of the main setting and of each variant that ``variant_specs``
    (evaluation.variant_systems, parsed) reports beside it: what every seeded report reads."""
    return replicas(["main", *dict.fromkeys(spec.variant for spec in variant_specs)], seeds, main_seed)


def seed_column(frame: pd.DataFrame, seed_replicas: dict[str, dict[str, int]], main_seed: int) -> pd.DataFrame:
    """``frame`` (rows of one variant or its replicas) relabelled to the base variant, with ``seed``:
    each replica's as :func:`replicas` named it (``seed_replicas``), any other variant's ``main_seed``."""
    named = {path: (variant, seed) for variant, paths in seed_replicas.items() for path, seed in paths.items()}
    parts = [named.get(v, (v, main_seed)) for v in frame.variant]
    return frame.assign(variant=[b for b, _ in parts], seed=[s for _, s in parts])


def kmr_over_seeds(summary: pd.DataFrame, targets, metric: str) -> pd.DataFrame:
    """:func:`kmr_table` of each seed of a ``summary`` with a ``seed`` column, then over seeds: one row
    per (dataset, system, variant, target) with value (mean), sd, min, max, n_seeds, frac_visited (mean)."""
    per_seed = pd.concat([kmr_table(s, targets, metric).assign(seed=seed) for seed, s in summary.groupby("seed")],
                         ignore_index=True)
    keys = ["dataset", "system", "variant", "metric", "target"]
    grouped = per_seed.groupby(keys, sort=False)
    out = grouped.agg(value=("value", "mean"), sd=("value", "std"), min=("value", "min"), max=("value", "max"),
                      frac_visited=("frac_visited", "mean"), n_seeds=("seed", "nunique")).reset_index()
    complete = grouped.value.apply(lambda v: v.notna().all()).to_numpy()
    out.loc[~complete, ["value", "sd", "min", "max", "frac_visited"]] = np.nan  # a seed had no point that cheap
    out["sd"] = out.sd.fillna(0.0).where(out.value.notna())
    return out


def per_query_over_seeds(per_query: pd.DataFrame, targets, metrics) -> pd.DataFrame:
    """Per-query values averaged over seeds at each target (``per_query`` with a ``seed`` column).

    One search per (system, target): ``budget_param`` KMR_POINT, ``budget_value`` the target, each
    query's value and frac_visited the means over seeds at each seed's KMR point; the systems of a
    single seed (``pre+``) keep theirs. Feed it to :func:`ehi.evaluate.stats.significance_report`:
    its KMR point at a target is then the seed-averaged point of that target (the mean fraction
    visited grows with the target, since each seed's point does)."""
    from ehi.evaluate.metrics import summarize

    targets = sorted(set(targets) | {1.0})
    on = ["system", "variant", "budget_param", "budget_value"]
    keys = ["dataset", "system", "variant", "target", "query_id"]
    frames = []
    for metric in metrics:
        rows = per_query[per_query.metric == metric]
        if rows.empty:
            continue
        per_seed = []
        for seed, seed_rows in rows.groupby("seed"):
            kmr = kmr_table(summarize(seed_rows), targets, metric).dropna(subset=["frac_visited"])
            per_seed.append(seed_rows.merge(kmr[[*on, "target"]], on=on).assign(seed=seed))
        picked = pd.concat(per_seed, ignore_index=True)
        n_seeds = rows.groupby("system").seed.nunique()
        work = {"frac_work": ("frac_work", "mean")} if "frac_work" in picked else {}  # where routing was counted
        mean = picked.groupby(keys, sort=False).agg(value=("value", "mean"), frac_visited=("frac_visited", "mean"),
                                                    **work, seeds=("seed", "nunique")).reset_index()
        mean = mean[mean.seeds == mean.system.map(n_seeds)]  # every seed of the system reached the target
        frames.append(mean.assign(metric=metric, budget_param=KMR_POINT, budget_value=mean.target)
                      .drop(columns=["target", "seeds"]))
    columns = list(per_query.columns.drop("seed"))
    return pd.concat(frames, ignore_index=True)[columns] if frames else per_query.iloc[:0][columns]


def with_seed_spread(table: pd.DataFrame, per_query: pd.DataFrame, targets, metrics) -> pd.DataFrame:
    """The significance ``table`` with each side's spread over seeds (``sd_a``/``sd_b``, ``n_seeds_a``/
    ``n_seeds_b``: of the system's KMR mean at that budget) and ``within_seed_spread``: |delta| is not
    larger than the larger of the two sds (``per_query``: per seed, with a ``seed`` column)."""
    from ehi.evaluate.metrics import summarize

    if table.empty:
        return table
    summary = pd.concat([summarize(rows.drop(columns="seed")).assign(seed=seed) for seed, rows in per_query.groupby("seed")],
                        ignore_index=True)
    targets = sorted(set(targets) | {1.0})
    spread = pd.concat([kmr_over_seeds(summary, targets, m) for m in metrics], ignore_index=True)
    spread = spread[["metric", "system", "target", "sd", "n_seeds"]].rename(columns={"target": "budget"})
    out = table
    for side in ("a", "b"):
        out = out.merge(spread.rename(columns={"system": f"system_{side}", "sd": f"sd_{side}", "n_seeds": f"n_seeds_{side}"}),
                        on=["metric", f"system_{side}", "budget"], how="left")
    out["within_seed_spread"] = out.delta.abs() <= out[["sd_a", "sd_b"]].max(axis=1)
    return out
