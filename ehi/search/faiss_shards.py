"""FAISS indexes filled shard by shard from :class:`ehi.search.shards.EmbeddingShards`.

The ``from_shards`` builders of the FAISS kinds (:mod:`ehi.search.registry`): the input never
sits in RAM as one float32 array (the index itself still holds its vectors: IVF-Flat and HNSW
store them). Each takes ``(shards, train_size, seed, **params)`` with the keywords of the kind's
in-memory ``build`` and refuses any other.
"""

from __future__ import annotations

import faiss
import numpy as np

from ehi.search.faiss_ann import FlatSearcher, HNSWSearcher, IVFSearcher, default_nlist


def _fill(index: faiss.Index, shards, kind: str, params: dict) -> None:
    if params:
        raise TypeError(f"unknown parameters for {kind}: {sorted(params)}")
    for _, block in shards.blocks():
        index.add(block)


def flat_from_shards(shards, train_size=None, seed=1234, **params) -> FlatSearcher:
    index = faiss.IndexFlatIP(shards.dim)
    _fill(index, shards, "exact", params)
    return FlatSearcher(index, {})


def hnsw_from_shards(shards, train_size=None, seed=1234, M=32, ef_construction=200, ef_max=4096,
                     **params) -> HNSWSearcher:
    """HNSW's graph depends on the insertion batches: as good as, not identical to, one call's."""
    index = faiss.IndexHNSWFlat(shards.dim, int(M), faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = int(ef_construction)
    _fill(index, shards, "faiss-hnsw", params)
    return HNSWSearcher(index, {"M": int(M), "ef_construction": int(ef_construction), "ef_max": int(ef_max)})


def ivf_from_shards(shards, train_size=None, seed=1234, nlist=None, spherical=True, **params) -> IVFSearcher:
    """The coarse quantizer trains on ``train_size`` rows drawn without replacement (``seed``;
    default 256 per list, faiss's own cap, so faiss does not subsample again; all rows when that
    covers the corpus, which then gives the very index ``build_searcher`` builds from the full
    array). The k-means seed is :meth:`IVFSearcher.build`'s default, whatever ``seed`` is."""
    d, n = shards.dim, shards.n_rows
    nlist = min(int(nlist or default_nlist(n)), n)
    ivf_seed = 1234
    quantizer = faiss.IndexFlatIP(d)
    index = faiss.IndexIVFFlat(quantizer, d, nlist, faiss.METRIC_INNER_PRODUCT)
    index.cp.seed, index.cp.spherical = ivf_seed, bool(spherical)
    size = min(n, int(train_size or 256 * nlist))
    sample = np.arange(n) if size >= n else np.sort(np.random.default_rng(seed).choice(n, size, replace=False))
    index.train(shards.take(sample))
    _fill(index, shards, "faiss-ivf", params)
    return IVFSearcher(index, {"nlist": nlist, "seed": ivf_seed, "spherical": bool(spherical)})
