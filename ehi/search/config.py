"""The ``search`` section of the config as a typed object: how every system is searched."""

from __future__ import annotations

from dataclasses import dataclass, field

from ehi.core.config import Section, bounded


@dataclass(frozen=True)
class SearchConfig(Section):
    """The ``search:`` block of the config; the schema's ``search:`` is generated from it (ehi.schema_file)."""

    section = "search"

    systems: list[str] = field(default_factory=lambda: [
        "pre+exact", "de+exact", "de+faiss-ivf", "de+faiss-hnsw", "de+scann", "de+scann-ah",
        "ehi+tree", "ehi+exact", "ehi+faiss-ivf", "ehi+faiss-hnsw", "ehi+scann"])
    k: int = bounded(100, minimum=1)  # documents returned per query; at least every metric cutoff (ehi.config_checks)
    batch_size: int = bounded(256, minimum=1)  # queries per search call (recorded with the QPS)
    threads: int = bounded(1, minimum=1)
    tune_split: str = "dev"  # baselines' build parameters are tuned here, never on the evaluated split
    ehi_beams: list[int] | None = bounded(None, minimum=1)  # None: a log-spaced grid from 1 to B^H
    ivf_nlist: list[int] | None = bounded(None, minimum=1)  # None: around sqrt(N)
    hnsw_M: list[int] = bounded(default_factory=lambda: [16, 32], minimum=2)
    hnsw_ef_construction: int = bounded(200, minimum=8)
    scann_leaves: list[int] | None = bounded(None, minimum=2)  # None: around sqrt(N)
    # true: ivf_nlist and scann_leaves are the grid rule dev_leaf_count swept for the tree's leaf
    # count, so no partition index may try finer lists than another
    lists_from_leaf_count: bool = False
    # what a budget counts: "documents" scored, or "work", documents plus the centroids routing
    # scores (ehi.core.work); "work" also records each query's routing (runs n_routed, tables frac_work)
    budget_cost: str = bounded("documents", choices=("documents", "work"))
    pq_m: int | None = bounded(None, minimum=1)  # PQ sub-quantizers of tree-pq and faiss-ivfpq; None: 2 bits per dimension
    pq_nbits: int = bounded(4, choices=(4, 8))  # bits per PQ code: 4 = FAISS fast scan, 8 = IndexIVFPQ
    pq_rerank: int = bounded(1000, minimum=0)  # best candidates re-scored exactly (0 = codes only)
    # below 1, a sweep stops after its first budget costing more than this fraction (of budget_cost;
    # work can pass 1 by routing); at 10^6 a budget past 10% of work costs minutes of a core
    max_frac: float = bounded(1.0, exclusive_minimum=0, maximum=1)
    # {kind name: FAISS index_factory string}, each a search of its own (ehi.search.factory_kinds)
    faiss_factories: dict[str, str] = field(default_factory=dict)
