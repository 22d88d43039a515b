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
from ehi.model.encoder import load_encoder
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
    model_dir: str | os.PathLike, dataset: Dataset, max_length: int, batch_size: int, device: str = "auto"
) -> tuple[np.ndarray, np.ndarray, dict]:
    """(corpus embeddings, query embeddings, timing facts) with the encoder saved in ``model_dir``."""
    encoder = load_encoder(str(model_dir), max_length=max_length, device=device)
    start = time.perf_counter()
    docs = encoder.encode(doc_texts(dataset.corpus), batch_size=batch_size, progress="corpus")
    doc_seconds = time.perf_counter() - start
    start = time.perf_counter()
    queries = encoder.encode(dataset.queries.text.astype(str).tolist(), batch_size=batch_size, progress="queries")
    query_seconds = time.perf_counter() - start
    log.info("embedded %d documents in %.1f s (%.1f docs/s)", len(docs), doc_seconds, len(docs) / max(doc_seconds, 1e-9))
    facts = {"doc_seconds": doc_seconds, "query_seconds": query_seconds, "device": str(encoder.device)}
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
