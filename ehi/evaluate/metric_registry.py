"""Metrics by name: a registered family computes its names, ranx computes every other name it knows.

A metric name is ``family@k`` (``ndcg@10``, ``psp@5``). Registered here: ``ndcg``, ``mrr``,
``recall``, ``precision`` and ``hits``, ranx's formulas without its numba compilation
(:mod:`ehi.evaluate.native_scorers`, equal to ranx's values bit for bit); ``psp``, the Extreme
Classification Repository's propensity-scored precision; and any plugin's (see
:mod:`ehi.core.plugins`). Every other name goes to ranx (``map``, ``f1``, ``r-precision``, ...),
whose cutoffs are capped at the corpus size (:func:`ehi.evaluate.metrics.capped_metrics`). A new
metric is one function plus one :func:`register_metric` call, modelled on ranx's ``metric_switch``.

A scorer is built once per run file, ``scorer(context, ks)``, and returns a function from one
search's run rows (a ``run`` table of one budget) to ``{name: per-query values}`` in the order of
``context.qids``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

from ehi.core.plugins import load_plugins
from ehi.core.rank_metrics import FAMILIES as NATIVE_FAMILIES
from ehi.evaluate.native_scorers import native_scorer
from ehi.evaluate.xmc import psp_scorer


@dataclass(frozen=True)
class MetricContext:
    """What a scorer may read about the evaluated queries; built once per run file."""

    qids: list[str]  # the judged queries (relevance >= 1), in the order of every per-query array
    qrels: pd.DataFrame  # query_id, doc_id, relevance of the evaluated split
    corpus_size: int
    doc_ids: np.ndarray | None = None  # corpus ids in row order
    inv_prop: np.ndarray | None = None  # inverse propensity per corpus row (ehi.evaluate.xmc)


Scorer = Callable[[pd.DataFrame], dict[str, np.ndarray]]


@dataclass(frozen=True)
class Metric:
    """A metric family: ``scorer(context, ks)`` -> a function of one search's run rows."""

    family: str
    scorer: Callable[[MetricContext, list[int]], Scorer]
    needs: tuple[str, ...] = ()  # MetricContext fields that must be given
    why: str = ""  # where those come from, for the error when they are missing


_REGISTRY: dict[str, Metric] = {}


def register_metric(metric: Metric) -> Metric:
    """Add a metric family; a name already taken is an error, not a silent override."""
    if metric.family in _REGISTRY:
        raise ValueError(f"metric family {metric.family!r} is already registered")
    _REGISTRY[metric.family] = metric
    return metric


for _family in NATIVE_FAMILIES:
    register_metric(Metric(_family, lambda ctx, ks, family=_family: native_scorer(family, ctx.qids, ctx.qrels,
                                                                                ctx.corpus_size, ks)))
register_metric(Metric("psp", lambda ctx, ks: psp_scorer(ctx.qids, ctx.qrels, ctx.doc_ids, ctx.inv_prop, ks),
                       needs=("inv_prop", "doc_ids"), why="propensities from the train split's label frequencies"))


def families() -> tuple[str, ...]:
    """Every registered family (psp and the plugins'): names the config check accepts beside ranx's."""
    load_plugins()
    return tuple(_REGISTRY)


def family(name: str) -> str:
    return name.partition("@")[0]


def registered(names) -> dict[str, list[str]]:
    """The names computed by a registered family, grouped by family in first-seen order."""
    load_plugins()
    groups: dict[str, list[str]] = {}
    for name in names:
        if family(name) in _REGISTRY:
            groups.setdefault(family(name), []).append(name)
    return groups


def ranx_names(names) -> list[str]:
    """The names ranx computes: every name of no registered family."""
    load_plugins()
    return [name for name in names if family(name) not in _REGISTRY]


def needs(names, field: str) -> bool:
    """Whether any of ``names`` needs ``field`` of the context (e.g. ``inv_prop``, worth computing)."""
    return any(field in _REGISTRY[fam].needs for fam in registered(names))


def scorers(names, context: MetricContext) -> list[Scorer]:
    """One scorer per registered family among ``names``; refuses a family whose needs are missing."""
    out = []
    for fam, members in registered(names).items():
        metric = _REGISTRY[fam]
        missing = [n for n in metric.needs if getattr(context, n) is None]
        if missing:
            raise ValueError(f"metrics {members} need {' and '.join(metric.needs)} ({metric.why})")
        out.append(metric.scorer(context, [int(n.split("@")[1]) for n in members]))
    return out
