"""What a metric name may be, and what values it may take: one rule for the config, the per-query
tables, the summaries and the significance tables.

A name is ``family@k`` (``ndcg@10``) or a family alone where a metric reads the whole ranking
(``map``); a cutoff past the depth the searches rank to (``search.k``) is refused
(:func:`depth_fault`). The families are ranx's (``ranx.metrics.metric_switch``) plus ``psp``
(:mod:`ehi.evaluate.xmc`) and any a plugin registers (:func:`ehi.evaluate.metric_registry.families`,
passed in by the caller, since that registry imports pandas). Kept light: the Snakefile reads it
while it parses.
"""

from __future__ import annotations

import re

# ranx's metric names (ranx.metrics.metric_switch), plus psp@k (ehi.evaluate.xmc); a cutoff is
# "@k" with k >= 1 (without one, a metric reads the whole ranking)
METRIC_NAMES = ("hits", "hit_rate", "precision", "recall", "f1", "mrr", "map", "dcg", "dcg_burges", "ndcg",
                "ndcg_burges", "r-precision", "bpref", "psp")
NEEDS_CUTOFF = ("psp",)
# families whose every value lies in [0, 1]; the rest (dcg, hits, psp) are only >= 0
UNIT_INTERVAL = ("ndcg", "ndcg_burges", "recall", "precision", "mrr", "map", "hit_rate", "f1", "r-precision", "bpref")


def family(name: str) -> str:
    return str(name).partition("@")[0]


def metric_fault(name: str, extra_families=()) -> str | None:
    """What is wrong with the metric name ``name`` (None: nothing); ``extra_families``: the
    registered families beyond ranx's (plugins included)."""
    known = (*METRIC_NAMES, *(f for f in extra_families if f not in METRIC_NAMES))
    base, at, cut = str(name).partition("@")
    if base not in known:
        return f"{name!r} is not a known metric; known: {', '.join(known)} (with a cutoff, e.g. ndcg@10)"
    if (at or base in NEEDS_CUTOFF) and not re.fullmatch(r"[1-9][0-9]*", cut):
        return f"{name!r} needs a cutoff of 1 or more after '@', e.g. {base}@10"
    return None


def cutoff(name: str) -> int | None:
    """The cutoff of a well-formed metric name (``ndcg@10``: 10), None where it reads the whole ranking."""
    cut = str(name).partition("@")[2]
    return int(cut) if cut else None


def depth_fault(metrics, k: int) -> str | None:
    """What is wrong with scoring rankings of ``k`` documents (``search.k``) with ``metrics`` (well
    formed), None where nothing is: a cutoff above ``k`` reads a ranking cut at ``k`` as if it were
    deeper (recall@100 of 50 documents), and the tables would print it under the deeper name."""
    deeper = sorted((c, name) for name in metrics if (c := cutoff(name)) is not None and c > k)
    if not deeper:
        return None
    deepest = deeper[-1][0]
    names = ", ".join(name for _, name in deeper)
    return (f"search.k: {k} is below the cutoff{'s' if len(deeper) > 1 else ''} of {names} in evaluation.metrics: "
            f"each ranking holds at most {k} document{'s' if k != 1 else ''}, scored as if it held {deepest}; raise search.k to {deepest} "
            f"or drop {names}")


def value_range(name: str) -> tuple[float, float]:
    """The values a metric of that name can take: [0, 1] for a unit-interval family, else [0, inf)."""
    return (0.0, 1.0) if family(name) in UNIT_INTERVAL else (0.0, float("inf"))
