"""Embed a corpus and its queries once with a trained encoder, and cache them as ``.npy``.

Every index (EHI's tree, FAISS, ScaNN) and every search reads these files; nothing re-encodes.
Rows follow the order of corpus.parquet / queries.parquet, so row ``i`` is ``doc_id[i]``.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

import numpy as np

from ehi.data.dataset import Dataset, doc_texts
from ehi.model import embed_cache
from ehi.core.io import atomic_path

log = logging.getLogger(__name__)


def save_array(array: np.ndarray, path: str | os.PathLike) -> Path:
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.save(fh, array)
    return Path(path)


def load_array(path: str | os.PathLike) -> np.ndarray:
    return np.load(path, allow_pickle=False)  # plain arrays only: never unpickle a cached file


def embed_dataset(
    model_dir: str | os.PathLike, dataset: Dataset, max_length: int, batch_size: int, device: str = "auto",
    cache_dir: str | os.PathLike | None = None, version: int = 0,
) -> tuple[np.ndarray, np.ndarray, dict]:
    """(corpus embeddings, query embeddings, timing facts) with the encoder saved in ``model_dir``.
    With ``cache_dir``, embeddings of the same weights and texts are computed once (ehi.model.embed_cache)."""
    from ehi.model.encoder import load_encoder  # torch: only the jobs that embed pay its import

    encoder = load_encoder(str(model_dir), max_length=max_length, device=device)
    texts, query_texts = doc_texts(dataset.corpus), dataset.queries.text.astype(str).tolist()
    key = embed_cache.cache_key(encoder, texts, query_texts, version) if cache_dir else None
    hit = embed_cache.lookup(cache_dir, key) if key else None
    if hit is not None:
        log.info("embeddings of these weights and texts reused from %s", Path(cache_dir) / key)
        return hit
    start = time.perf_counter()
    docs = encoder.encode(texts, batch_size=batch_size, progress="corpus")
    doc_seconds = time.perf_counter() - start
    start = time.perf_counter()
    queries = encoder.encode(query_texts, batch_size=batch_size, progress="queries")
    query_seconds = time.perf_counter() - start
    log.info("embedded %d documents in %.1f s (%.1f docs/s)", len(docs), doc_seconds, len(docs) / max(doc_seconds, 1e-9))
    facts = {"doc_seconds": doc_seconds, "query_seconds": query_seconds, "device": str(encoder.device)}
    if key:
        embed_cache.store(cache_dir, key, docs, queries, facts)
    return docs, queries, facts


def timing_frame(dataset: str, model: str, facts: dict, n_docs: int, n_queries: int, threads: int):
    """The embedding stage's timings in the ``timings`` schema."""
    import pandas as pd

    return pd.DataFrame(
        {
            "dataset": dataset,
            "system": model,
            "stage": ["embed_corpus", "embed_queries"],
            "seconds": [facts["doc_seconds"], facts["query_seconds"]],
            "items": [n_docs, n_queries],
            "threads": threads,
            "device": facts["device"],
        }
    )
