"""A toy partitioner, registered through the registry alone (tests/workflow/test_toy_partition.py).

ANNS kind ``toy-partition``: a seeded random balanced partition (each list gets N / n_lists
documents, drawn at random), routed by the mean of each list's documents. It knows nothing of the
data, so it is the floor any learned partition (k-means, EHI's tree) must beat at the same lists.

Put this folder on PYTHONPATH and name the module in EHI_PLUGINS (ehi/core/plugins.py).
"""

from __future__ import annotations

import numpy as np

from ehi.search.partition import partition_kind
from ehi.search.registry import register_kind


def random_balanced(emb: np.ndarray, n_lists: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Lists of equal size (within one) at random; each list's centroid is its documents' mean."""
    leaf = np.empty(len(emb), dtype=np.int64)
    leaf[np.random.default_rng(seed).permutation(len(emb))] = np.arange(len(emb)) % n_lists
    centroids = np.zeros((n_lists, emb.shape[1]), dtype=np.float64)
    np.add.at(centroids, leaf, emb)
    return leaf, (centroids / np.bincount(leaf, minlength=n_lists)[:, None]).astype(np.float32)


register_kind(partition_kind("toy-partition", f"{__name__}:random_balanced", marker="v"))
