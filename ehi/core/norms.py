"""The largest norm a vector the project ranks may have, for query rows
(:mod:`ehi.search.query_args`) and the rows of a vectors folder (:mod:`ehi.data.embeddings`) alike.

float32 squares a vector to normalise it and sums products to score it: past sqrt(float32 max),
about 1.84e19, the squared norm is inf, so the row normalises to zeros and every score with it
overflows; its ranking would be arbitrary without an error.
"""

from __future__ import annotations

import numpy as np

MAX_NORM = float(np.sqrt(np.finfo(np.float32).max))


def row_norms(rows: np.ndarray) -> np.ndarray:
    """Each row's norm (n,) in float64 (NaN for a row holding a NaN, inf for one holding an inf,
    0 for an all-zero row), without a float64 copy of the rows."""
    return np.sqrt(np.einsum("ij,ij->i", rows, rows, dtype=np.float64))
