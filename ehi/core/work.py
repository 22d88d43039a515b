"""The cost model of a query: documents scored plus the routing that chose them.

A partition index pays twice per query: it scores the centroids (or router rows) that pick where
to search, then the documents there. ``n_scored / N``, the fraction of documents scored, counts
the second part only; at 1,000 lists over 5,000 documents the first part alone is 20% of an
exhaustive scan. The unit here is one inner product of the query's dimension d:

* a document scored = 1 unit (exact, or by its PQ code: the QPS axis measures what codes save);
* a centroid scored = 1 unit: IVF's flat quantizer scores all ``nlist`` centroids a query, ScaNN
  all its leaf centres, an exported one-level EHI tree all its ``B`` leaf centroids;
* EHI's beam search (:class:`ehi.search.route.NumpyRouter`) folds each level's affine maps into
  one (B, d) matrix, so routing a query costs H x B rows whatever the beam; a ``per_node`` tree
  adds, per level, the hidden x d product ``U_h x`` and, for each of the ``min(beam, B^h)``
  parents kept, B products of the hidden width (counted as hidden / d units each);
* a graph index (HNSW) counts every distance it computes, its descent included, as documents:
  0 routing units.

Not counted: the beam's bookkeeping (adding a parent's log-probability to each of its B children
and keeping the best ``beam``; one addition a candidate, not d), a PQ lookup table, an exact
re-rank of candidates already counted. The fraction of work of a query is
``(n_scored + n_routed) / N``.
"""

from __future__ import annotations

import math

import numpy as np


def tree_routing_units(height: int, branching: int, beam: int, dim: int, hidden: int | None = None,
                       per_node: bool = False) -> int:
    """Inner products (of width ``dim``) EHI's folded beam search computes for one query at ``beam``."""
    units = height * branching  # the stacked (H*B, d) matrix of every level's shared logits
    if per_node:
        hidden = int(hidden or dim)
        for h in range(height):
            kept = min(beam, branching**h)  # parents entering level h
            units += hidden + math.ceil(kept * branching * hidden / dim)
    return int(units)


def fraction_of_work(scored, n_routed, n_docs: int, *, scored_is_fraction: bool = False) -> np.ndarray:
    """(documents scored + routing units) / N per query (or per point): the one place the fraction of
    work is computed; NaN where the routing is unknown. ``scored_is_fraction``: ``scored`` is already
    the fraction of documents scored (a run recorded without its counts), kept as it is and the
    routing's share added, rather than multiplied back into a count (which would round)."""
    scored = np.asarray(scored, dtype=np.float64)
    n_routed = np.asarray(n_routed, dtype=np.float64)
    if scored_is_fraction:
        return scored + n_routed / float(n_docs)
    return (scored + n_routed) / float(n_docs)


# The budget a report reads (evaluation.budget_axis), as its tables and figures name it
BUDGET_AXES = {"documents": "documents scored", "work": "work (documents scored plus routing)"}


def on_budget_axis(frame, axis: str, where: str = "results"):
    """``frame`` (per-query or summary rows) with its budget column ``frac_visited`` read as ``axis``:
    "documents" leaves it, "work" puts ``frac_work`` there, so every pick at a budget (the KMR
    table's, the significance tests', the claims') and every curve counts the routing."""
    if axis == "documents" or frame.empty:
        return frame
    if axis != "work":
        raise ValueError(f"budget axis must be one of {sorted(BUDGET_AXES)}, got {axis!r}")
    # a query whose point scored nothing (its beam reached only empty leaves) has neither fraction:
    # only a known fraction of documents without its work is missing routing
    if "frac_work" not in frame or (frame.frac_work.isna() & frame.frac_visited.notna()).any():
        from ehi.core.errors import DataError

        raise DataError(f"{where}: evaluation.budget_axis work reads each query's routing, which these rows lack "
                        "(searched under search.budget_cost documents)")
    return frame.assign(frac_visited=frame.frac_work)
