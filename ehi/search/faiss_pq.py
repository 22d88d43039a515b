"""Compressed leaves: FAISS IVF-PQ over any embeddings (kind ``faiss-ivfpq``) and EHI's own leaves
product-quantized (search ``tree-pq``), so EHI meets ScaNN-AH at the same compression.

Both use the same codes: ``nbits`` = 4 (``IndexIVFPQFastScan``, SIMD lookup tables, as ScaNN-AH's
16-centre blocks) or 8 (``IndexIVFPQ``), ``m`` sub-quantizers (default: 2 bits per dimension, the
compression of ScaNN-AH at its default 2 dimensions per 4-bit block: m = d/2 at 4 bits, d/4 at 8),
and optionally the best ``rerank`` candidates re-scored exactly (``IndexRefineFlat``; ScaNN-AH's
``reorder_k``). Budget accounting is IVF's: ``n_scored`` = the summed sizes of the probed lists;
every document in them is scored, by its code.

``faiss-ivfpq`` trains FAISS's own spherical k-means lists and encodes residuals (FAISS's default,
the stronger peer). ``tree-pq`` is :class:`ehi.search.exported.ExportedIndex` built in memory with
these settings: EHI's leaves, EHI's routing, codes without residuals (see :mod:`ehi.search.export`).
"""

from __future__ import annotations

import faiss
import numpy as np

from ehi.search.base import SearchResult, as_matrix, log_grid, pad_results
from ehi.search.faiss_ann import FaissSearcher, default_nlist, ivf_list_sizes, probed_lists

PQ_SETTINGS = {"pq_m": None, "pq_nbits": 4, "pq_rerank": 1000}  # search.* keys, SearchConfig's defaults
ADD_CHUNK = 1 << 16  # rows padded and added at a time: bounds the extra copy of the corpus
# Codebook k-means sample per centre (FAISS's default is 256): at 8 bits, 256 x 256 points for each of
# d/4 sub-quantizers made training take minutes on the shared CPU; 64 is above FAISS's warning (39)
PQ_POINTS_PER_CENTROID = 64


def pad(x: np.ndarray, dim: int) -> np.ndarray:
    """x (n, d) widened with zero columns to (n, dim), float32."""
    out = np.zeros((len(x), dim), dtype=np.float32)
    out[:, : x.shape[1]] = x
    return out


def with_refine(base: faiss.Index, docs: np.ndarray, rerank: int) -> faiss.IndexRefine:
    """``base`` (ids = rows of ``docs``) wrapped so that its best ``rerank`` candidates are re-scored
    exactly against ``docs`` (N, d), zero-padded to the index's dimension (an IndexRefine)."""
    flat = faiss.IndexFlatIP(base.d)  # looked up by id: row i of docs is vector i
    for s in range(0, len(docs), ADD_CHUNK):
        flat.add(pad(docs[s : s + ADD_CHUNK], base.d))
    refine = faiss.IndexRefine(base, flat)
    refine.k_factor = max(1.0, rerank / 100)  # a written file's default (k = 100); searches set R / k
    refine.referenced_objects = [base, flat]  # the wrapper does not own them: keep them alive with it
    return refine


def fast_scan(codes, quantizer):
    """An IndexIVFPQ of 4-bit codes repacked as IndexIVFPQFastScan (SIMD scanning), kept alive with
    the index and quantizer it shares without owning."""
    ivf = faiss.IndexIVFPQFastScan(codes)
    ivf.referenced_objects = [codes, quantizer]
    return ivf


def default_pq_m(dim: int, nbits: int) -> int:
    """Sub-quantizers for 2 bits per dimension (m = 2d / nbits), lowered to a divisor of ``dim``."""
    m = max(1, (2 * dim) // nbits)
    while dim % m:
        m -= 1
    return m


def pq_params(settings, dim: int | None) -> dict:
    """The PQ build keywords (m, nbits, rerank) from the ``search.pq_*`` settings: a
    :class:`~ehi.search.config.SearchConfig`, a mapping of those keys, or None for the defaults.
    Without ``dim`` a null ``pq_m`` is left out, for the build to choose from the embeddings."""
    if settings is None:
        given = {}
    elif isinstance(settings, dict):
        given = {k: v for k, v in settings.items() if k in PQ_SETTINGS}
    else:
        given = {k: getattr(settings, k) for k in PQ_SETTINGS if hasattr(settings, k)}
    s = {**PQ_SETTINGS, **given}
    nbits = int(s["pq_nbits"])
    m = s["pq_m"] or (default_pq_m(dim, nbits) if dim is not None else None)
    return {**({"m": int(m)} if m else {}), "nbits": nbits, "rerank": int(s["pq_rerank"])}


def _training_sample(emb: np.ndarray, nlist: int, seed: int) -> np.ndarray:
    """Up to max(100k, 256 per list) rows: what k-means and the codebooks use anyway (FAISS caps
    k-means at 256 points per centroid), without computing residuals for the whole corpus."""
    size = max(100_000, 256 * nlist)
    if len(emb) <= size:
        return emb
    return emb[np.sort(np.random.default_rng(seed).choice(len(emb), size, replace=False))]


class IVFPQSearcher(FaissSearcher):
    """FAISS IVF-PQ: k-means lists, PQ codes scanned in the ``nprobe`` nearest lists, optional re-rank.

    ``load(path, meta)`` is :class:`~ehi.search.faiss_ann.FaissSearcher`'s: the written file holds the
    re-ranking wrapper too, and ``params`` says how many it re-scores."""

    name = "faiss-ivfpq"
    budget_param = "nprobe"

    def __init__(self, index: faiss.Index, params: dict | None = None):
        super().__init__(index.ntotal, params or {})
        self._owner = index
        self.ivf = faiss.extract_index_ivf(index)
        self.quantizer = faiss.downcast_index(self.ivf.quantizer)
        self.rerank = int(self.params.get("rerank", 0))
        self.list_sizes = ivf_list_sizes(self.ivf)

    @classmethod
    def build(cls, emb: np.ndarray, nlist: int | None = None, m: int | None = None, nbits: int = 4,
              rerank: int = 0, seed: int = 1234, centroids: np.ndarray | None = None) -> "IVFPQSearcher":
        """``centroids`` (nlist, d): use these lists instead of training k-means (e.g. an IVF-Flat
        index's, to compare the codes alone on the same lists)."""
        emb = as_matrix(emb)
        if centroids is not None:
            nlist = len(centroids)
        dim = emb.shape[1]
        nlist = min(int(nlist or default_nlist(len(emb))), len(emb))
        m = int(m or default_pq_m(dim, nbits))
        if nbits not in (4, 8) or dim % m:
            raise ValueError(f"faiss-ivfpq: nbits must be 4 or 8 and m must divide {dim}; got m={m}, nbits={nbits}")
        if len(emb) < 2**nbits:
            raise ValueError(f"faiss-ivfpq: {nbits}-bit codes need at least {2**nbits} documents, got {len(emb)}")
        codes = f"PQ{m}x4fs" if nbits == 4 else f"PQ{m}x8np"  # np: no polysemous training (slow, unused)
        index = faiss.index_factory(dim, f"IVF{nlist},{codes}", faiss.METRIC_INNER_PRODUCT)
        ivf = faiss.downcast_index(faiss.extract_index_ivf(index))  # IndexIVFPQ(FastScan): has .pq
        ivf.cp.seed, ivf.cp.spherical = int(seed), True  # as IVFSearcher: lists ranked by cosine
        ivf.pq.cp.seed, ivf.pq.cp.max_points_per_centroid = int(seed), PQ_POINTS_PER_CENTROID
        if centroids is not None:  # a complete quantizer: train() then fits the codes only
            faiss.downcast_index(ivf.quantizer).add(as_matrix(centroids))
        index.train(_training_sample(emb, nlist, seed))
        index.add(emb)
        searcher = cls(index, {"nlist": nlist, "m": m, "nbits": nbits, "rerank": 0, "seed": seed})
        return searcher.reranked(emb, rerank) if rerank > 0 else searcher

    def reranked(self, emb: np.ndarray, rerank: int) -> "IVFPQSearcher":
        """The same lists and codes, with the best ``rerank`` re-scored exactly against ``emb``."""
        if self.rerank > 0:
            raise ValueError("this index already re-ranks")
        return IVFPQSearcher(with_refine(self._owner, as_matrix(emb), rerank), {**self.params, "rerank": int(rerank)})

    def _params(self, k: int, nprobe: int):
        ivf = faiss.SearchParametersIVF(nprobe=int(nprobe))
        if self.rerank <= 0:
            return ivf
        return faiss.IndexRefineSearchParameters(k_factor=(max(k, self.rerank) + 0.5) / k, base_index_params=ivf)

    def search(self, queries: np.ndarray, k: int, budget_value: int) -> SearchResult:
        queries = as_matrix(queries)
        nprobe = max(1, min(int(budget_value), self.ivf.nlist))
        rows, scores = self.search_ids(queries, k, nprobe)
        return rows, scores, probed_lists(self.quantizer, self.list_sizes, queries, nprobe)[2]

    def routing_units(self, budget_value: int) -> int:
        return int(self.ivf.nlist)  # the coarse quantizer, as IVF-Flat's (ehi.core.work)

    def search_ids(self, queries, k, budget_value):
        nprobe = max(1, min(int(budget_value), self.ivf.nlist))
        scores, rows = self._owner.search(as_matrix(queries), int(k), params=self._params(k, nprobe))
        return pad_results(rows, scores, k)

    def default_sweep(self) -> list[int]:
        return log_grid(1, self.ivf.nlist, 20)

    def _save_index(self, path) -> None:
        faiss.write_index(self._owner, str(path / "index.faiss"))
