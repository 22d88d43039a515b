"""A FAISS index from an ``index_factory`` string (the kinds of :mod:`ehi.search.factory_kinds`),
searched and counted by what the built index is, not by the string's spelling.

The budget knob is read from the index: an IVF anywhere in it (behind OPQ or PCA, under a refine)
sweeps ``nprobe``; else an HNSW graph sweeps ``efSearch``; else it is exhaustive (``exact``). FAISS's
``ParameterSpace`` sets the knob through every wrapper. Budget accounting follows the plain kinds:

* IVF: ``n_scored`` = the summed sizes of the probed lists, the lists found by the index's own
  quantizer on the queries after its transforms (OPQ rotation, PCA); a refinement re-scores some of
  those documents again and adds none. Routing is counted as a flat quantizer's ``nlist``.
* HNSW: FAISS's per-query distance count (``hnsw_stats.ndis``), capped at N, as faiss-hnsw.
* exhaustive: every document.
"""

from __future__ import annotations

import re

import faiss
import numpy as np

from ehi.search.base import SearchResult, as_matrix, log_grid, pad_results
from ehi.search.faiss_ann import FaissSearcher, default_nlist, ivf_list_sizes, probed_lists
from ehi.search.faiss_pq import _training_sample


def _layers(index: faiss.Index) -> list[faiss.Index]:
    """The index and every index it wraps, outermost first (refine, pre-transform, IVF or HNSW)."""
    out = [faiss.downcast_index(index)]
    while True:
        inner = out[-1]
        nested = getattr(inner, "base_index", None) if isinstance(inner, faiss.IndexRefine) else (
            inner.index if isinstance(inner, faiss.IndexPreTransform) else None)
        if nested is None:
            return out
        out.append(faiss.downcast_index(nested))


def faiss_reason(err: RuntimeError) -> str:
    """FAISS's own words of an error, without the C++ function and source line it names."""
    last = str(err).strip().splitlines()[-1]
    return re.sub(r"^Error in .*? at \S+:\d+: (Error: )?", "", last)


def build_index(spelled: str, dim: int, kind: str = "faiss-factory") -> faiss.Index:
    """The empty index of a factory string (placeholders filled), by inner product; a string FAISS
    cannot build over ``dim`` is a ValueError naming it and FAISS's reason."""
    try:
        return faiss.index_factory(int(dim), spelled, faiss.METRIC_INNER_PRODUCT)
    except RuntimeError as err:
        raise ValueError(f"{kind}: FAISS cannot build {spelled!r} over d={dim}: {faiss_reason(err)}") from None


def budget_knob(index: faiss.Index) -> str:
    """The knob a search of ``index`` sweeps: ``nprobe`` (an IVF anywhere in it), else ``efSearch``
    (an HNSW graph), else ``exact``."""
    if faiss.try_extract_index_ivf(index) is not None:
        return "nprobe"
    return "efSearch" if any(isinstance(x, faiss.IndexHNSW) for x in _layers(index)) else "exact"


def unsearchable(index: faiss.Index) -> str | None:
    """Why the pipeline cannot search or count ``index`` as the module doc says, or None: a graph
    other than HNSW (its search has no knob counted here, yet it scores far fewer than N), an ID map
    (documents are added by position), a PCA to more dimensions than it is given."""
    for layer in _layers(index):
        if isinstance(layer, (faiss.IndexNSG, faiss.IndexNNDescent)):
            return f"{type(layer).__name__} is a graph whose budget is not counted (of the graphs, HNSW's efSearch is)"
        if isinstance(layer, faiss.IndexIDMap):
            return "IDMap asks for ids with every document; the pipeline adds documents by position"
        if isinstance(layer, faiss.IndexPreTransform):
            for i in range(layer.chain.size()):
                step = layer.chain.at(i)
                if isinstance(faiss.downcast_VectorTransform(step), faiss.PCAMatrix) and step.d_out > step.d_in:
                    return f"PCA to {step.d_out} dimensions of {step.d_in}: it can only reduce them"
    return None


class FactorySearcher(FaissSearcher):
    """Any FAISS index a factory string builds, by inner product; see the module doc."""

    name = "faiss-factory"

    def __init__(self, index: faiss.Index, params: dict | None = None):
        super().__init__(index.ntotal, params or {})
        self._owner = index
        layers = _layers(index)
        self._layers = layers  # the wrappers do not own what they wrap: keep every layer alive
        self.name = self.params.get("kind", self.name)
        self.refine = next((x for x in layers if isinstance(x, faiss.IndexRefine)), None)
        self.pre = next((x for x in layers if isinstance(x, faiss.IndexPreTransform)), None)
        self.ivf = faiss.try_extract_index_ivf(index)
        self.rerank = int(self.params.get("rerank", 0))
        self.budget_param = budget_knob(index)
        if self.ivf is not None:
            self.quantizer = faiss.downcast_index(self.ivf.quantizer)
            self.list_sizes = ivf_list_sizes(self.ivf)
        self.ef_max = int(self.params.get("ef_max", 4096))

    @classmethod
    def build(cls, emb: np.ndarray, factory: str, nlist: int | None = None, M: int | None = None,
              rerank: int = 0, seed: int = 1234, kind: str = "faiss-factory") -> "FactorySearcher":
        """``factory`` with its placeholders filled (``{nlist}``: about sqrt(N) when not given,
        ``{M}``: 32), trained on the corpus (a sample of it at scale) and filled with it."""
        emb = as_matrix(emb)
        nlist = min(int(nlist or default_nlist(len(emb))), len(emb))
        M = int(M or 32)
        spelled = factory.format(nlist=nlist, M=M)
        index = build_index(spelled, emb.shape[1], kind)
        try:
            if not index.is_trained:
                index.train(_training_sample(emb, nlist, seed))
            index.add(emb)
        except RuntimeError as err:  # e.g. fewer documents than a codebook's centres
            raise ValueError(f"{kind}: FAISS cannot train {spelled!r} on {len(emb)} documents: "
                             f"{faiss_reason(err)}") from None
        params = {"factory": factory, "index": spelled, "kind": kind, "rerank": int(rerank),
                  **({"nlist": nlist} if "{nlist}" in factory else {}), **({"M": M} if "{M}" in factory else {})}
        return cls(index, params)

    @classmethod
    def sweeps_budget(cls, factory: str = "", **build_defaults) -> bool:
        from ehi.search.factory_kinds import probe_index

        return budget_knob(probe_index(factory)[0]) != "exact"

    def _set(self, budget_value: int, k: int) -> int:
        """Set the knob (and the refinement's candidates for ``k``); returns the value set."""
        space = faiss.ParameterSpace()
        if self.budget_param == "nprobe":
            value = max(1, min(int(budget_value), self.ivf.nlist))
            space.set_index_parameter(self._owner, "nprobe", value)
        elif self.budget_param == "efSearch":
            value = max(1, int(budget_value))
            space.set_index_parameter(self._owner, "efSearch", value)
        else:
            value = 1
        if self.refine is not None:
            self.refine.k_factor = (max(k, self.rerank) + 0.5) / k if self.rerank > 0 else 1.0
        return value

    def _k(self, k: int, value: int) -> int:
        # as faiss-hnsw: at most efSearch results, so low beams are the budgets they are
        return min(k, value, self.n_docs) if self.budget_param == "efSearch" else min(k, self.n_docs)

    def search(self, queries: np.ndarray, k: int, budget_value: int) -> SearchResult:
        queries = as_matrix(queries)
        value = self._set(budget_value, k)
        if self.budget_param == "efSearch":
            rows = np.empty((len(queries), self._k(k, value)), dtype=np.int64)
            scores = np.empty(rows.shape, dtype=np.float32)
            n_scored = np.empty(len(queries), dtype=np.int64)
            stats = faiss.cvar.hnsw_stats
            for i in range(len(queries)):  # one query per call: the stats counter is process-global
                stats.reset()
                scores[i : i + 1], rows[i : i + 1] = self._owner.search(queries[i : i + 1], rows.shape[1])
                n_scored[i] = stats.ndis
            return (*pad_results(rows, scores, k), np.minimum(n_scored, self.n_docs))
        scores, rows = self._owner.search(queries, self._k(k, value))
        if self.budget_param == "exact":
            return (*pad_results(rows, scores, k), np.full(len(queries), self.n_docs, dtype=np.int64))
        n_scored = probed_lists(self.quantizer, self.list_sizes, self._transformed(queries), value)[2]
        return (*pad_results(rows, scores, k), n_scored)

    def _transformed(self, queries: np.ndarray) -> np.ndarray:
        """The queries as the IVF sees them: through the pre-transform chain (OPQ, PCA), if any."""
        if self.pre is None:
            return queries
        for i in range(self.pre.chain.size()):
            queries = as_matrix(self.pre.chain.at(i).apply(queries))
        return queries

    def search_ids(self, queries, k, budget_value):
        value = self._set(budget_value, k)
        scores, rows = self._owner.search(as_matrix(queries), self._k(k, value))
        return pad_results(rows, scores, k)

    def routing_units(self, budget_value: int) -> int:
        return int(self.ivf.nlist) if self.ivf is not None else 0

    def default_sweep(self) -> list[int]:
        if self.budget_param == "nprobe":
            return log_grid(1, self.ivf.nlist, 20)
        if self.budget_param == "efSearch":
            return log_grid(1, min(self.n_docs, self.ef_max), 20)
        return [1]

    def _save_index(self, path) -> None:
        faiss.write_index(self._owner, str(path / "index.faiss"))
