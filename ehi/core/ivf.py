"""FAISS-IVF's coarse quantizer, trained once here: the IVF baseline builds its index on it and
EHI's floor tree copies its centroids (:func:`ivf_centroids`), and the tree's IVF control
(ehi.search.ivf_lists) partitions by them, so the partitions are the same k-means leaf for leaf. Below the stages, since training uses it as well as search."""

from __future__ import annotations

import numpy as np

IVF_SEED = 1234  # the k-means seed of FAISS-IVF's partition wherever the pipeline builds it


def trained_ivf(emb: np.ndarray, nlist: int, seed: int = IVF_SEED, spherical: bool = True):
    """An empty ``faiss.IndexIVFFlat`` (inner product) whose quantizer is trained on ``emb`` (n, d).

    ``spherical`` renormalises the centroids, so routing by inner product ranks lists by cosine,
    the same similarity the documents are ranked by."""
    import faiss

    emb = np.ascontiguousarray(emb, dtype=np.float32)
    quantizer = faiss.IndexFlatIP(emb.shape[1])
    index = faiss.IndexIVFFlat(quantizer, emb.shape[1], int(nlist), faiss.METRIC_INNER_PRODUCT)
    index.cp.seed = int(seed)
    index.cp.spherical = bool(spherical)
    index.train(emb)
    return index  # faiss's wrapper keeps ``quantizer`` alive as long as ``index``


def ivf_centroids(emb: np.ndarray, nlist: int, seed: int = IVF_SEED) -> np.ndarray:
    """The (nlist, d) coarse centroids FAISS-IVF trains on ``emb`` (the pipeline's builder, its
    default seed; at most one list a document)."""
    import faiss

    emb = np.ascontiguousarray(emb, dtype=np.float32)
    index = trained_ivf(emb, min(int(nlist), len(emb)), seed)  # held: it owns the quantizer read below
    quantizer = faiss.downcast_index(index.quantizer)
    return quantizer.reconstruct_n(0, quantizer.ntotal)
