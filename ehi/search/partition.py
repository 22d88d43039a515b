"""A partitioner as a registry entry: the lists come from a function, scoring and re-ranking are
options of the system, set once each.

A partition index groups the corpus into lists and routes a query to the ``nprobe`` lists whose
centroids score highest; the documents of those lists are scored flat or by PQ codes, the best
``rerank`` optionally re-scored exactly. Only the grouping differs between methods (k-means IVF,
EHI's tree, ScaNN's tree, a random split), so a new method is one *partitioner*:

    partitioner(emb (N, d) float32, n_lists, seed) -> (list of each document (N,) int64,
                                                       routing centroids (n_lists, d) float32)

and one registry entry from :func:`partition_kind`, whose searcher is :class:`PartitionSearcher`
(FAISS's IVF over exactly those lists, ``add_preassigned``: FAISS never reassigns a document). Its
grid is the list counts (``search.ivf_nlist``, or rule dev_leaf_count's with
``search.lists_from_leaf_count``), its budget ``nprobe``, its accounting IVF's (``n_scored`` = the
summed sizes of the probed lists, routing = every centroid). A plugin partitioner
(tests/plugins/ehi_toy_partition.py) is searched, evaluated and reported with no other edit.
"""

from __future__ import annotations

import functools

import numpy as np

from ehi.search.base import as_matrix
from ehi.search.faiss_pq import PQ_POINTS_PER_CENTROID, IVFPQSearcher, default_pq_m, fast_scan, with_refine
from ehi.search.grids import ivf_grid, ivfpq_grid
from ehi.search.registry import PQ_SETTINGS, AnnKind

SCORINGS = ("flat", "pq")  # exact inner products in the probed lists, or PQ codes (search.pq_*)


class PartitionSearcher(IVFPQSearcher):
    """An IVF index over a partitioner's lists; searched, timed, saved and loaded as IVF-PQ is
    (:class:`~ehi.search.faiss_pq.IVFPQSearcher`: its search reads any IVF, flat or coded)."""

    name = "partition"
    budget_param = "nprobe"

    @classmethod
    def build(cls, emb: np.ndarray, partitioner: str, nlist: int | None = None, scoring: str = "flat",
              m: int | None = None, nbits: int = 4, rerank: int = 0, seed: int = 1234) -> "PartitionSearcher":
        """``partitioner``: "module:function" (the module doc's contract), resolved on use."""
        import faiss
        from faiss.contrib.ivf_tools import add_preassigned

        from ehi.core.plugins import resolve
        from ehi.search.faiss_ann import default_nlist

        emb = as_matrix(emb)
        n_docs, dim = emb.shape
        nlist = min(int(nlist or default_nlist(n_docs)), n_docs)
        if scoring not in SCORINGS:
            raise ValueError(f"partition scoring {scoring!r}: expected one of {SCORINGS}")
        function = resolve(partitioner)
        _check_signature(partitioner, function)
        leaf, centroids = checked_partition(partitioner, function(emb, nlist, seed), n_docs, dim, nlist)
        quantizer = faiss.IndexFlatIP(dim)
        quantizer.add(centroids)  # complete: train() fits the codes only
        metric = faiss.METRIC_INNER_PRODUCT
        params = {"partitioner": partitioner, "nlist": nlist, "scoring": scoring, "seed": seed}
        if scoring == "flat":
            ivf = faiss.IndexIVFFlat(quantizer, dim, nlist, metric)
        else:
            m = int(m or default_pq_m(dim, nbits))
            ivf = faiss.IndexIVFPQ(quantizer, dim, nlist, m, nbits, metric)
            ivf.by_residual = False  # a partitioner's centroids need not be points of the data
            ivf.pq.cp.seed, ivf.pq.cp.max_points_per_centroid = int(seed), PQ_POINTS_PER_CENTROID
            ivf.train(emb)
            params.update(m=m, nbits=nbits)
        ivf.referenced_objects = [quantizer]
        ids = np.arange(n_docs, dtype=np.int64)  # held here: add_preassigned keeps only a raw pointer
        add_preassigned(ivf, emb, leaf, ids)
        if scoring == "pq" and nbits == 4:
            ivf = fast_scan(ivf, quantizer)
        index = with_refine(ivf, emb, rerank) if rerank > 0 else ivf
        return cls(index, {**params, "rerank": int(rerank)})


def _check_signature(partitioner: str, function) -> None:
    """A partitioner that cannot take (emb, n_lists, seed) is named, not a TypeError of a lambda."""
    import inspect

    from ehi.core.plugins import PluginError

    try:
        inspect.signature(function).bind(None, 1, 0)
    except TypeError as err:
        raise PluginError(f"partitioner {partitioner}: cannot be called as f(emb, n_lists, seed) ({err})") from None
    except ValueError:  # a builtin without a signature: called as it is
        pass


def checked_partition(partitioner: str, result, n_docs: int, dim: int, nlist: int) -> tuple[np.ndarray, np.ndarray]:
    """A partitioner's (lists, centroids) as the contract says, or a :class:`PluginError` naming it:
    a NaN centroid routes no query anywhere (an empty run) and an infinite one takes every query."""
    from ehi.core.plugins import PluginError

    def refuse(what: str):
        raise PluginError(f"partitioner {partitioner}: {what}")

    if not isinstance(result, tuple) or len(result) != 2:
        refuse(f"returned {type(result).__name__}, not (list of each document, centroids)")
    leaf, centroids = (np.asarray(part) for part in result)
    if leaf.shape != (n_docs,) or not np.issubdtype(leaf.dtype, np.integer):
        refuse(f"lists of shape {leaf.shape} and dtype {leaf.dtype}; expected ({n_docs},) integers")
    if n_docs and (leaf.min() < 0 or leaf.max() >= nlist):
        refuse(f"list ids {leaf.min()}..{leaf.max()}; expected 0..{nlist - 1}")
    if centroids.shape != (nlist, dim) or not np.issubdtype(centroids.dtype, np.floating):
        refuse(f"centroids of shape {centroids.shape} and dtype {centroids.dtype}; expected ({nlist}, {dim}) floats")
    with np.errstate(over="ignore"):
        centroids = as_matrix(centroids)  # float32, as FAISS scores them: a float64 beyond its range is inf
    bad = ~np.isfinite(centroids).all(axis=1)
    if bad.any():
        refuse(f"centroid {int(np.argmax(bad))} (one of {int(bad.sum())}) holds a NaN or infinite value")
    return np.ascontiguousarray(leaf, dtype=np.int64), centroids


def _grid(scoring: str, n_docs: int, settings) -> list[dict]:
    return ivfpq_grid(n_docs, settings) if scoring == "pq" else ivf_grid(n_docs, settings)


def partition_kind(name: str, partitioner: str, scoring: str = "flat", **style) -> AnnKind:
    """The registry entry of a partitioner (``"module:function"``) scored ``scoring`` ("flat", or
    "pq" with the ``search.pq_*`` codes and re-ranking); ``style``: AnnKind's marker, in_paper, colours."""
    if scoring not in SCORINGS:
        raise ValueError(f"partition scoring {scoring!r}: expected one of {SCORINGS}")
    keys = ("ivf_nlist", *(PQ_SETTINGS if scoring == "pq" else ()))
    return AnnKind(name, f"{__name__}:PartitionSearcher", functools.partial(_grid, scoring), keys,
                   (("partitioner", partitioner), ("scoring", scoring)), **{"in_paper": False, **style})
