"""What a search of an EHI index is asked, checked before anything is ranked: the query rows, k
and the beam, by one function (:func:`checked_search`) for every surface that searches an
:class:`~ehi.search.tree_index.EHIIndex`: the index ``ehi.fit_tree`` returns, the one
``ehi.load_index`` opens (:class:`ehi.serve.api.SearchIndex`) and ``ehi search``.

A NaN query row would rank nothing, an all-zero one (or one so large its scores overflow float32)
gives every document the same score and so an arbitrary order, an integer array is no embedding
(token or row ids passed by mistake), a beam of 2.5 would be truncated without a word, and a k of
10^9 on 200 documents would allocate gigabytes of padding. Each is refused in one line naming the
argument or the row; a k above the corpus size is capped at it, with a warning.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from ehi.core.errors import SearchIndexError
from ehi.core.norms import MAX_NORM, row_norms

CHECK_ROWS = 65_536  # rows checked at a time: a memory-mapped 10^6-row file in bounded memory


def _integer(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise SearchIndexError(f"{name} must be an integer, got {value!r}")
    return int(value)


def check_beam(beam, n_leaves: int) -> int:
    """``beam`` as an int between 1 and the leaf count."""
    beam = _integer(beam, "beam")
    if not 1 <= beam <= n_leaves:
        raise SearchIndexError(f"beam must be between 1 and the number of leaves ({n_leaves}), got {beam}")
    return beam


def capped_k(k, n_docs: int, name: str = "k") -> tuple[int, str | None]:
    """(``k`` capped at the corpus size, the note saying so or None); ``k`` an integer of at least 1."""
    k = _integer(k, name)
    if k < 1:
        raise SearchIndexError(f"{name} must be at least 1, got {k}")
    if k > n_docs:
        return n_docs, f"{name} {k} is above the {n_docs} documents of the index: capped at {n_docs}"
    return k, None


def check_k(k, n_docs: int) -> int:
    """``k`` capped at the corpus size, with a warning where it was above it."""
    k, note = capped_k(k, n_docs)
    if note:
        warnings.warn(note, UserWarning, stacklevel=4)  # at the caller of the search
    return k


def check_query_matrix(vectors, dim: int) -> None:
    """The whole array's shape and dtype, read without its rows (a memory-mapped file stays on disk):
    a float (n, ``dim``) array; integers are refused, not converted (no embedding model writes them)."""
    vectors = np.asarray(vectors)  # a memory-mapped array stays a view
    if vectors.ndim != 2 or vectors.shape[1] != dim or not np.issubdtype(vectors.dtype, np.floating):
        raise SearchIndexError(f"query vectors must be a float (n, {dim}) array, got {vectors.dtype} {vectors.shape}")


def check_query_rows(rows: np.ndarray, what: str = "query vector") -> None:
    """Refuse a row with a NaN or infinite value, of norm 0, or of a norm whose scores overflow float32."""
    for start in range(0, len(rows), CHECK_ROWS):
        norms = row_norms(np.asarray(rows[start:start + CHECK_ROWS]))
        bad = np.flatnonzero(~np.isfinite(norms) | (norms == 0) | (norms > MAX_NORM))
        if bad.size:
            norm = norms[bad[0]]
            why = ("holds NaN or infinite values" if not np.isfinite(norm) else "is all zeros" if norm == 0
                   else f"has norm {norm:.3g}, above {MAX_NORM:.3g}: its scores would overflow float32")
            raise SearchIndexError(f"{what} row {start + int(bad[0])} {why}: nothing to rank by")


def checked_search(queries, beam, k, *, dim: int, n_docs: int, n_leaves: int) -> tuple[np.ndarray, int, int]:
    """(queries as C-contiguous float32 (nq, ``dim``), beam, k) of a search, or one
    :class:`SearchIndexError` line: :func:`check_query_matrix`, :func:`check_query_rows`,
    :func:`check_beam` (an integer in 1..``n_leaves``, never a float or a bool read as one) and
    :func:`check_k` (an integer of at least 1, capped at ``n_docs`` with a warning)."""
    beam, k = check_beam(beam, n_leaves), check_k(k, n_docs)
    check_query_matrix(queries, dim)
    check_query_rows(queries)
    return np.ascontiguousarray(queries, dtype=np.float32), beam, k
