"""Seeded unit vectors for the search tests: one place for the shapes every searcher is tried on."""

import numpy as np


def unit(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length, float32 (the pipeline's embeddings are normalised)."""
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def random_unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    """``n`` directions drawn uniformly on the sphere: no structure for an index to find."""
    return unit(rng.standard_normal((n, dim)))


def clustered(rng: np.random.Generator, n_docs: int, n_queries: int, dim: int, n_topics: int,
              doc_noise: float, query_noise: float) -> tuple[np.ndarray, np.ndarray]:
    """Documents and queries around ``n_topics`` shared centres (a partition index has lists to
    find), drawn in this order: centres, documents, queries."""
    centres = rng.standard_normal((n_topics, dim))
    docs = unit(centres[rng.integers(0, n_topics, n_docs)] + doc_noise * rng.standard_normal((n_docs, dim)))
    queries = unit(centres[rng.integers(0, n_topics, n_queries)] + query_noise * rng.standard_normal((n_queries, dim)))
    return docs, queries
