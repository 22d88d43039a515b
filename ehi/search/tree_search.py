"""EHI's tree as a search of the registry: the kinds ``tree`` and ``tree-pq`` search the trained
index of rule ``ehi_index`` (their :class:`~ehi.search.registry.AnnKind` names these functions as
``from_index``), at the tree's beams.

``tree`` loads the index's FAISS export (:func:`ehi.search.exported.load_export`), written once by
rule ``ehi_index``: EHI's leaves as the lists of an IVF index, routed by the tree, scored exactly.
``tree-pq`` scores the same leaves by PQ codes (the ``search.pq_*`` settings), trained here on the
index's documents (read from the export's lists), so it builds a FAISS index of its own.
Both return what :func:`ehi.evaluate.sweep.search_system` sweeps: (budget knob, budgets, searcher,
the parameters it was built with).
"""

from __future__ import annotations

from pathlib import Path

from ehi.search.base import log_grid
from ehi.search.config import SearchConfig
from ehi.search.tree_index import EXPORT_FILE


def beam_grid(n_leaves: int, beams=None) -> list[int]:
    """EHI's beams: the configured ones, else a log-spaced grid from 1 to every leaf."""
    if beams:
        bad = [b for b in beams if not 1 <= b <= n_leaves]
        if bad:
            raise ValueError(f"search.ehi_beams {bad} out of range: the tree has {n_leaves} leaves (beam 1..{n_leaves})")
        return sorted(set(beams))
    return log_grid(1, n_leaves, n_points=max(2, min(16, n_leaves)))


def flat_tree_search(index_dir, settings: SearchConfig):
    """The tree over exact leaves: the index's FAISS export, loaded as written (nothing rebuilt)."""
    from ehi.search.exported import load_export
    from ehi.search.tree_index import EHIIndex

    EHIIndex.check_version(index_dir)
    searcher = load_export(Path(index_dir) / EXPORT_FILE)
    searcher.set_threads(settings.threads)
    n_leaves = int(searcher.meta["n_leaves"])
    return "beam", beam_grid(n_leaves, settings.ehi_beams), searcher, {"n_leaves": n_leaves}


def pq_tree_search(index_dir, settings: SearchConfig):
    """The tree over its leaves as PQ codes (``search.pq_*``), codebooks trained on the index's documents."""
    from ehi.search.faiss_pq import pq_params
    from ehi.search.tree_index import EHIIndex

    index = EHIIndex.load(index_dir)
    params = pq_params(settings, index.doc_emb.shape[1])
    searcher = index.searcher(pq_m=params["m"], nbits=params["nbits"], rerank=params["rerank"])
    searcher.set_threads(settings.threads)
    n_leaves = len(index.leaf_sizes)
    return "beam", beam_grid(n_leaves, settings.ehi_beams), searcher, {"n_leaves": n_leaves, **params}
