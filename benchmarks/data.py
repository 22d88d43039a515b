"""The embeddings every benchmark searches: a synthetic clustered set and SciFact with MiniLM."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

DIM = 384
SCIFACT_PRE = Path("resources/scifact/main/pre/emb")  # what `snakemake --configfile config/scifact.yaml` embeds
CACHE = Path("resources/benchmarks")


def _normalize(x: np.ndarray) -> np.ndarray:
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x


def clustered(n: int, n_queries: int = 1000, dim: int = DIM, seed: int = 0,
              chunk: int = 1 << 16) -> tuple[np.ndarray, np.ndarray]:
    """``n`` unit vectors (n, dim) float32 and ``n_queries`` queries drawn the same way.

    Two-level structure, as topic hierarchies in text embeddings: 32 topics, ``max(16, n // 100)``
    clusters spread around them (cosine to their topic about 0.7), each point its cluster centre
    plus isotropic noise of 1.5 times its norm (cosine to its centre about 0.55, to another member
    about 0.3, to a point of another topic about 0). Generated in chunks into one
    preallocated array, so the peak memory is the array plus a chunk.
    """
    rng = np.random.default_rng([seed, n])
    topics = _normalize(rng.standard_normal((32, dim), dtype=np.float32))
    n_clusters = max(16, n // 100)
    centres = topics[rng.integers(0, 32, n_clusters)] + 1.0 * _normalize(
        rng.standard_normal((n_clusters, dim), dtype=np.float32))
    centres = _normalize(centres)

    def draw(count: int, out: np.ndarray) -> None:
        for s in range(0, count, chunk):
            m = min(chunk, count - s)
            noise = _normalize(rng.standard_normal((m, dim), dtype=np.float32))
            out[s : s + m] = _normalize(centres[rng.integers(0, n_clusters, m)] + 1.5 * noise)

    docs = np.empty((n, dim), dtype=np.float32)
    draw(n, docs)
    queries = np.empty((n_queries, dim), dtype=np.float32)
    draw(n_queries, queries)
    return docs, queries


def scifact(data_dir: str | os.PathLike = "../shared/data/scifact", max_length: int = 192,
            cache: str | os.PathLike = CACHE) -> tuple[np.ndarray, np.ndarray] | None:
    """SciFact corpus (5,183 x 384) and query embeddings by pretrained all-MiniLM-L6-v2.

    Reads, in order: the pipeline's own ``pre`` embeddings (config/scifact.yaml), this benchmark's
    cache, or embeds ``data_dir`` (a local BEIR copy) through :mod:`ehi` and caches the result.
    Returns None, with a log line saying why, when none of these exists.
    """
    from ehi.model.embed import load_array, save_array

    for folder in (SCIFACT_PRE, Path(cache) / "scifact"):
        if (folder / "corpus.npy").exists() and (folder / "queries.npy").exists():
            log.info("SciFact embeddings from %s", folder)
            return load_array(folder / "corpus.npy"), load_array(folder / "queries.npy")
    if not Path(data_dir).exists():
        log.warning("SciFact skipped: no embeddings under %s and no BEIR copy at %s", SCIFACT_PRE, data_dir)
        return None
    from ehi.data.beir import load_beir
    from ehi.data.dataset import doc_texts
    from ehi.model.encoder import load_encoder

    dataset = load_beir(data_dir, name="scifact")
    encoder = load_encoder("minilm", max_length=max_length, device="cpu")
    log.info("embedding SciFact (%d documents) with MiniLM; cached under %s", len(dataset.corpus), cache)
    docs = encoder.encode(doc_texts(dataset.corpus), batch_size=64)
    queries = encoder.encode(dataset.queries.text.astype(str).tolist(), batch_size=64)
    save_array(docs, Path(cache) / "scifact" / "corpus.npy")
    save_array(queries, Path(cache) / "scifact" / "queries.npy")
    return docs, queries


def load(name: str, n: int | None = None, n_queries: int = 1000):
    """``("scifact", None)`` or ``("synthetic", n)`` -> (docs, queries), or None if unavailable."""
    if name == "scifact":
        return scifact()
    if name == "synthetic":
        return clustered(int(n), n_queries)
    raise ValueError(f"unknown benchmark dataset {name!r}")
