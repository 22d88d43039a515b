"""Embeddings keyed by what determines them: the encoder's weights and tokenizer, the texts, the
maximum length and the CPU kernels. Two encoders with the same weights (a frozen encoder that EHI
trained only a tree over, or the pretrained one a DE kept at epoch 0) embed once per dataset.

The key hashes tensor contents by name, not the weight files, so a folder that ``Encoder.save``
wrote and the hub's own files of the same weights meet. A hit copies the cached arrays and returns
the timing facts of the run that computed them, marked ``cached``, so timing tables still show
what embedding costs.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np

from ehi.core.io import atomic_dir

FILES = ("corpus.npy", "queries.npy")


def texts_digest(texts) -> str:
    """sha256 of the texts in order, each ended by a NUL (no two lists of texts share a digest)."""
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode("utf-8") + b"\0")
    return digest.hexdigest()


def encoder_digest(encoder) -> str:
    """sha256 over every tensor the embeddings read (sorted by name: dtype, shape, bytes), the
    tokenizer's serialized form and the maximum length."""
    digest = hashlib.sha256()
    for name, tensor in sorted(encoder.model.state_dict().items()):
        if name.startswith("pooler."):  # BERT's pooler: unused by the mean pooling, and not always saved
            continue
        array = tensor.detach().cpu().contiguous().numpy()
        digest.update(f"{name}|{array.dtype}|{array.shape}".encode())
        digest.update(array.tobytes())
    digest.update(tokenizer_form(encoder.tokenizer).encode())
    digest.update(f"max_length={encoder.max_length}".encode())
    return digest.hexdigest()


def tokenizer_form(tokenizer) -> str:
    """The fast tokenizer's JSON without its truncation and padding state, which a call sets and a
    save keeps, so a saved copy of a tokenizer reads as the tokenizer (max_length is keyed apart)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return repr(tokenizer)
    form = json.loads(backend.to_str())
    form.pop("truncation", None)
    form.pop("padding", None)
    return json.dumps(form, sort_keys=True)


def cache_key(encoder, doc_texts, query_texts, version) -> str:
    """One folder name per (weights, tokenizer, length, texts, kernels, embed version)."""
    from ehi.core.kernels import kernel_environment

    parts = {"encoder": encoder_digest(encoder), "docs": texts_digest(doc_texts), "queries": texts_digest(query_texts),
             "kernels": kernel_environment(), "version": version}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:24]


def lookup(root: str | os.PathLike, key: str) -> tuple[np.ndarray, np.ndarray, dict] | None:
    """(docs, queries, facts of the computing run with ``cached`` set) or None on a miss."""
    folder = Path(root) / key
    if not all((folder / f).exists() for f in (*FILES, "facts.json")):
        return None
    facts = {**json.loads((folder / "facts.json").read_text()), "cached": True}
    return (np.load(folder / FILES[0], allow_pickle=False), np.load(folder / FILES[1], allow_pickle=False), facts)


def store(root: str | os.PathLike, key: str, docs: np.ndarray, queries: np.ndarray, facts: dict) -> None:
    with atomic_dir(Path(root) / key) as tmp:  # whole or absent, whatever kills the job
        np.save(tmp / FILES[0], docs)
        np.save(tmp / FILES[1], queries)
        (tmp / "facts.json").write_text(json.dumps(facts, indent=1) + "\n")
