"""The search contract every index follows, EHI's own tree included.

A searcher is built over a corpus embedding matrix (N, d) float32 whose rows are unit norm, so an
inner product is a cosine. ``search(queries, k, budget_value)`` returns

* ``rows``     (nq, k) int64, corpus row positions, best first, ``-1`` where a query got fewer than k;
* ``scores``   (nq, k) float32, the scores the index ranked by, ``-inf`` where padded;
* ``n_scored`` (nq,)   int64, how many documents the index computed a score for, for that query.

``n_scored / N`` is the query's fraction of the corpus visited: the budget axis of the KMR curve.
``routing_units(budget_value)`` says what a query scores before any document to choose where to
search (centroids, router rows; :mod:`ehi.core.work` states the cost model), so a budget can also
be read as a fraction of work, ``(n_scored + routing) / N``.
Each searcher names the knob it sweeps (``budget_param``) and proposes a default sweep that reaches
the low fractions (1-5 %) as well as the full corpus.
"""

from __future__ import annotations

import abc
import json
import os
from pathlib import Path

import numpy as np

from ehi.core.ranking import at_budget  # noqa: F401 (the budget rule, re-exported for searchers)

SearchResult = tuple[np.ndarray, np.ndarray, np.ndarray]  # rows, scores, n_scored


def as_matrix(x: np.ndarray) -> np.ndarray:
    """C-contiguous float32 (n, d): what faiss and scann read without another copy."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    if x.ndim != 2:
        raise ValueError(f"expected an (n, d) matrix, got shape {x.shape}")
    return x


def log_grid(lo: int, hi: int, n_points: int = 12) -> list[int]:
    """Distinct integers from ``lo`` to ``hi`` (both included), evenly spaced in log scale.

    A log grid spends its points where recall changes fastest (few probes, small beams), which is
    where the 1-5 % budgets are; a linear grid would put most points near the full corpus.
    """
    lo, hi = max(1, int(lo)), max(1, int(hi))
    if hi <= lo:
        return [hi]
    grid = np.unique(np.rint(np.geomspace(lo, hi, n_points)).astype(int))
    return [int(v) for v in grid]


def pad_results(rows: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Widen (nq, k') results to (nq, k) with -1 / -inf and normalise dtypes and padding."""
    rows = np.asarray(rows, dtype=np.int64)
    scores = np.asarray(scores, dtype=np.float32)
    out_rows = np.full((rows.shape[0], k), -1, dtype=np.int64)
    out_scores = np.full((rows.shape[0], k), -np.inf, dtype=np.float32)
    width = min(k, rows.shape[1])
    out_rows[:, :width] = rows[:, :width]
    out_scores[:, :width] = scores[:, :width]
    invalid = out_rows < 0
    out_scores[invalid] = -np.inf  # faiss pads with -FLT_MAX, scann with NaN: one convention here
    return out_rows, out_scores


def factory_string(index) -> str | None:
    """``faiss.contrib.factory_tools.reverse_index_factory`` of ``index``, or None where FAISS's
    reverse has no spelling for one of its parts."""
    from faiss.contrib.factory_tools import reverse_index_factory

    try:
        return reverse_index_factory(index)
    except (NotImplementedError, AttributeError, TypeError, AssertionError):
        return None


class Searcher(abc.ABC):
    """An ANNS index over one embedding matrix, with budget accounting (see the module doc)."""

    name: str = ""  # the search half of a system name: "exact", "faiss-ivf", "scann", ...
    budget_param: str = ""  # the knob the sweep turns: "nprobe", "efSearch", "leaves_to_search"

    def __init__(self, n_docs: int, params: dict):
        self.n_docs = int(n_docs)
        self.params = dict(params)  # build parameters, recorded with the results

    @classmethod
    def sweeps_budget(cls, **build_defaults) -> bool:
        """Whether an index of this class built with its kind's fixed keywords has a budget to sweep
        rather than scoring every document (a class whose knob depends on them overrides this)."""
        return cls.budget_param != "exact"

    @abc.abstractmethod
    def search(self, queries: np.ndarray, k: int, budget_value: int) -> SearchResult:
        """Top-k rows, their scores and the per-query number of documents scored."""

    def routing_units(self, budget_value: int) -> int:
        """Inner products a query computes at ``budget_value`` to choose where to search, beside its
        ``n_scored`` documents (:mod:`ehi.core.work`). 0 here: exact search routes nothing, and a graph
        index counts its descent among its distance computations. Partition indexes override it."""
        return 0

    def faiss_index(self) -> str | None:
        """The FAISS ``index_factory`` string of the index searched (``reverse_index_factory``),
        recorded with its runs; None where there is no FAISS index (ScaNN) or FAISS cannot spell it."""
        return None

    def search_ids(self, queries: np.ndarray, k: int, budget_value: int) -> tuple[np.ndarray, np.ndarray]:
        """The same ranking without the accounting: what a timing measures."""
        rows, scores, _ = self.search(queries, k, budget_value)
        return rows, scores

    @abc.abstractmethod
    def default_sweep(self) -> list[int]:
        """Budget values from the cheapest useful one up to (close to) the full corpus."""

    @property
    def full_budget(self) -> int:
        """The budget value at which the index scores (or can reach) the whole corpus."""
        return self.default_sweep()[-1]

    def set_threads(self, threads: int) -> None:
        """Search threads; faiss reads OpenMP's global setting, scann its own."""
        import faiss

        faiss.omp_set_num_threads(int(threads))

    # -- persistence: an index directory holds params.json plus the library's own files --
    def save(self, path: str | os.PathLike) -> Path:
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        meta = {"kind": self.name, "n_docs": self.n_docs, "params": self.params}
        (path / "params.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
        self._save_index(path)
        return path

    def _save_index(self, path: Path) -> None:
        raise NotImplementedError(f"{type(self).__name__} cannot be saved")
