"""The beam a trained index is used at: the largest beam whose measured cost on the dev queries
stays within the training's dev budget (``train.dev_budget``, counted as ``train.dev_cost``).

A search index records it (``config.json``'s ``beam``, rule ``search_index``) and its FAISS export
opens at it (``nprobe``), so a user of either starts at the budget the index was chosen at rather
than at one leaf. The point is read as every table reads a budget (:func:`ehi.core.ranking.at_budget`
over the beams' mean fraction of documents scored, plus the router's rows under ``work``); the
cheapest beam where none is that cheap.
"""

from __future__ import annotations

import numpy as np
import torch

from ehi.core.ranking import at_budget
from ehi.train.dev_eval import beam_points


def beam_at_budget(index, query_emb: np.ndarray, budget: float, cost: str | None = None) -> dict:
    """``{"beam", "fraction", "budget", "cost", "queries"}`` of the :class:`~ehi.search.tree_index.EHIIndex`
    ``index`` on ``query_emb`` (nq, d): the largest beam whose mean fraction of ``cost``
    ("documents", or "work": documents plus routing) is at most ``budget``."""
    cost = cost or "documents"
    q = torch.from_numpy(np.ascontiguousarray(query_emb, dtype=np.float32))
    routing = index.routing_units if cost == "work" else None
    with torch.no_grad():
        points = beam_points(index.indexer, q, np.asarray(index.leaf_sizes), index.n_docs, budget, routing)
    fraction, beam, _ = points[at_budget([p[0] for p in points], budget, cheapest_if_none=True)]
    return {"beam": int(beam), "fraction": round(float(fraction), 6), "budget": float(budget), "cost": cost,
            "queries": int(len(query_emb))}


def beam_words(chosen: dict) -> str:
    """What a recorded beam is, in one sentence."""
    from ehi.core.work import BUDGET_AXES

    cost = BUDGET_AXES.get(chosen["cost"], chosen["cost"])
    return (f"beam {chosen['beam']}: the largest whose mean {cost} on the {chosen['queries']} dev queries "
            f"({chosen['fraction']:.1%} of the corpus) is within the training's dev budget of {chosen['budget']:.0%}")


def dev_beam(index, queries, query_emb: np.ndarray, train: dict) -> dict | None:
    """:func:`beam_at_budget` on the dev split of ``queries`` (the query table, split column, whose
    rows ``query_emb`` holds) at ``train``'s dev budget and cost (a training config's keys, the
    defaults where unset); None where the dataset has no dev queries."""
    from ehi.train.config import TrainConfig

    defaults = TrainConfig()
    dev = np.flatnonzero((queries.split == train.get("dev_split", defaults.dev_split)).to_numpy())
    if not len(dev):
        return None
    return beam_at_budget(index, np.asarray(query_emb[dev]), float(train.get("dev_budget", defaults.dev_budget)),
                          train.get("dev_cost"))
