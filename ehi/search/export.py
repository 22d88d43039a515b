"""EHI's index as a standard FAISS index: the tree folded into an IVF coarse quantizer.

For a tree of height 1 the routing is exactly an inner-product top-b. Its logits are an affine map
of the query, ``A x + c`` (:class:`~ehi.search.route.NumpyRouter` folds ``A = W_z U`` and
``c`` from the biases and the root's one-hot column), the softmax keeps their order and
documents sit in their argmax leaf. With one extra dimension, queries ``[x, 1]``, centroids
``[A_i, c_i]`` and stored vectors ``[x, 0]``, this is an ordinary ``faiss.IndexIVFFlat`` whose
``nprobe`` is EHI's beam and whose inner products are the documents' exact scores. The leaves are
filled with EHI's own assignment (``faiss.contrib.ivf_tools.add_preassigned``; FAISS's quantizer
never assigns a document) and the ids are corpus rows. The file is a drop-in index of the user's
d dimensions: an ``IndexPreTransform`` whose ``LinearTransform`` appends the constant coordinate
to each query (``[x] -> [x, 1, 0, ...]``) before the IVF searches it, so
``faiss.read_index(path).search(queries, k)`` takes d-dimensional queries as they come.

Quantized leaves: ``IndexIVFPQ`` (8-bit codes) or ``IndexIVFPQFastScan`` (4-bit codes), with
``by_residual`` off since EHI's centroids are routing weights, not points of the data space (a
residual against them means nothing). PQ splits the vector into equal blocks, so the extra
dimension is padded into a block of its own: ``M`` sub-quantizers code the ``d`` real dimensions
(exactly as a plain IVF-PQ with ``M`` on the same vectors would) and one more codes the constant
block, whose codebook is all zeros (it only ever sees zeros). ``rerank=R`` wraps the index in an
``IndexRefineFlat``: the best R by code are re-scored exactly.

Height >= 2 cannot be folded exactly: the beam ranks paths by the product of per-level softmaxes,
and each level's normalisation depends on the query, which no single inner product reproduces.
The export then still writes the leaves as a FAISS IVF index, but its coarse quantizer only
approximates EHI's routing (each leaf's centroid is the sum of the level logits along its path, the
unnormalised log-probability); EHI's routing is written beside it as a numpy router (exact).
"""

from __future__ import annotations

import faiss
import numpy as np
from faiss.contrib.ivf_tools import add_preassigned

from ehi.search.faiss_pq import ADD_CHUNK, PQ_POINTS_PER_CENTROID, fast_scan, pad, with_refine
from ehi.search.route import NumpyRouter

PQ_TRAIN_SAMPLE = 100_000  # rows the codebooks are trained on (k-means then samples per centre)


def leaf_centroids(router: NumpyRouter) -> tuple[np.ndarray, np.ndarray]:
    """(L, d) weights and (L,) offsets whose ``x @ w.T + b`` ranks the leaves.

    Each leaf's row sums the level logits along its path: for height 1 these are the tree's logits
    exactly (float64 sums, stored as float32); for height >= 2 an approximation of the beam (see
    the module doc)."""
    h_total, b = router.height, router.branching
    leaf = np.arange(router.n_leaves)
    weight = np.zeros((router.n_leaves, router.dim))
    bias = np.zeros(router.n_leaves)
    w = {k: v.astype(np.float64) for k, v in router.weights.items()}
    for h in range(h_total):
        parent = leaf // b ** (h_total - h)  # node id at level h of each leaf's path
        child = (leaf // b ** (h_total - h - 1)) % b
        weight += w[f"A.{h}"][child]
        bias += w[f"c.{h}"][child] + w[f"parent.{h}"][parent, child]
        if router.per_node:
            delta = w[f"delta.{h}"][parent, child]  # (L, hidden)
            weight += delta @ w[f"U.{h}"]
            bias += delta @ w[f"U_bias.{h}"]
    return weight.astype(np.float32), bias.astype(np.float32)


def padded_dim(dim: int, pq_m: int | None) -> int:
    """FAISS dimension: d + 1 for flat leaves; for PQ one more block of d / M dimensions."""
    if pq_m is None:
        return dim + 1
    if pq_m < 1 or dim % pq_m:
        raise ValueError(f"pq_m must divide the embedding dimension {dim}, got pq_m={pq_m}")
    return dim + dim // pq_m


def augment(x: np.ndarray, faiss_dim: int, constant: float) -> np.ndarray:
    """[x, constant, 0, ...] (n, faiss_dim): queries take 1, stored documents 0."""
    out = pad(x, faiss_dim)
    out[:, x.shape[1]] = constant
    return out


def query_transform(dim: int, faiss_dim: int) -> faiss.LinearTransform:
    """The pre-transform ``x (dim) -> [x, 1, 0, ...] (faiss_dim)``: the identity plus a bias of 1 at
    coordinate ``dim``, where the router's offsets sit in the centroids."""
    transform = faiss.LinearTransform(dim, faiss_dim, True)
    matrix = np.zeros((faiss_dim, dim), dtype=np.float32)
    matrix[:dim] = np.eye(dim, dtype=np.float32)
    bias = np.zeros(faiss_dim, dtype=np.float32)
    bias[dim] = 1.0
    faiss.copy_array_to_vector(matrix.ravel(), transform.A)
    faiss.copy_array_to_vector(bias, transform.b)
    transform.is_trained = True
    return transform


def drop_in(inner, dim: int):
    """``inner`` (an index of the padded dimension, documents stored as ``[x, 0, ...]``) behind the
    query pre-transform: an index of ``dim`` dimensions, searched as any FAISS index is."""
    transform = query_transform(dim, inner.d)
    index = faiss.IndexPreTransform(transform, inner)
    index.ntotal = inner.ntotal  # filled before wrapping: the wrapper's own add would pad documents with 1
    index.referenced_objects = [transform, inner]  # the wrapper owns neither: keep them alive with it
    return index


def _empty_ivf(quantizer, faiss_dim: int, n_leaves: int, pq_m: int | None, nbits: int):
    metric = faiss.METRIC_INNER_PRODUCT
    if pq_m is None:
        return faiss.IndexIVFFlat(quantizer, faiss_dim, n_leaves, metric)
    if nbits not in (4, 8):
        raise ValueError(f"PQ codes of 4 bits (fast scan) or 8 bits, got nbits={nbits}")
    ivf = faiss.IndexIVFPQ(quantizer, faiss_dim, n_leaves, pq_m + 1, nbits, metric)
    ivf.by_residual = False
    return ivf


def _train_pq(ivf, docs: np.ndarray, faiss_dim: int, nbits: int, seed: int) -> None:
    """Train the codebooks on (a sample of) the stored vectors; the quantizer is already complete."""
    need = 2**nbits
    if len(docs) < need:
        raise ValueError(f"{nbits}-bit PQ needs at least {need} documents to train its codebooks, got {len(docs)}")
    rows = np.random.default_rng(seed).choice(len(docs), min(PQ_TRAIN_SAMPLE, len(docs)), replace=False)
    ivf.pq.cp.seed, ivf.pq.cp.max_points_per_centroid = int(seed), PQ_POINTS_PER_CENTROID
    ivf.train(augment(docs[np.sort(rows)], faiss_dim, 0.0))


def build_leaf_ivf(router: NumpyRouter, docs: np.ndarray, leaf: np.ndarray, pq_m: int | None = None,
                   nbits: int = 4, rerank: int = 0, seed: int = 0):
    """The FAISS index of EHI's leaves: docs (N, d) in corpus order, each in its ``leaf`` (N,), id = row.

    Returns an IndexPreTransform of d dimensions (:func:`drop_in`) over an IndexIVFFlat /
    IndexIVFPQ (8-bit) / IndexIVFPQFastScan (4-bit), wrapped in an IndexRefine with a flat refine
    index when ``rerank`` > 0.
    """
    faiss_dim = padded_dim(router.dim, pq_m)
    weight, bias = leaf_centroids(router)
    quantizer = faiss.IndexFlatIP(faiss_dim)
    centroids = np.zeros((router.n_leaves, faiss_dim), dtype=np.float32)
    centroids[:, : router.dim], centroids[:, router.dim] = weight, bias
    quantizer.add(centroids)  # complete: train() then skips k-means (ntotal == nlist)
    ivf = _empty_ivf(quantizer, faiss_dim, router.n_leaves, pq_m, nbits)
    if pq_m is not None:
        _train_pq(ivf, docs, faiss_dim, nbits, seed)
    leaf = np.ascontiguousarray(leaf, dtype=np.int64)
    ids = np.arange(len(docs), dtype=np.int64)  # held here: add_preassigned keeps only a raw pointer
    for s in range(0, len(docs), ADD_CHUNK):
        add_preassigned(ivf, augment(docs[s : s + ADD_CHUNK], faiss_dim, 0.0), leaf[s : s + ADD_CHUNK],
                        ids[s : s + ADD_CHUNK])
    if pq_m is not None and nbits == 4:
        ivf = fast_scan(ivf, quantizer)
    return drop_in(with_refine(ivf, docs, rerank) if rerank > 0 else ivf, router.dim)
