"""FAISS-IVF's coarse quantizer, trained once here: the IVF baseline builds its index on it and
EHI's floor tree copies its centroids (ehi.model.tree_init.ivf_centroids), so the two partitions
are the same k-means leaf for leaf. Below the stages, since training uses it as well as search."""

from __future__ import annotations

import numpy as np


def trained_ivf(emb: np.ndarray, nlist: int, seed: int = 1234, spherical: bool = True):
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
