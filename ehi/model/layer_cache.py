"""Frozen bottom layers, computed once: ``train.freeze_layers`` for CPU-sized fine-tuning.

With the embeddings and the bottom k transformer layers frozen, their output for a text never
changes during a run, so it is computed once per text (eval mode, no dropout), stored on disk as
float16 rows (ragged: each text keeps only its real tokens; a memory-mapped ``hidden.npy`` plus
``offsets.npy``) and every training step and corpus re-embedding runs only the top layers from it.
On SciFact at 192 tokens that is ~0.75 GB of disk and, with k = 4 of MiniLM's 6 layers, about a
third of the encoder's compute per step.

The top layers are run with the model's own modules (``model.encoder.layer[k:]``) and the
library's own attention-mask builder, so the cached forward equals the full forward up to the
storage precision (float32 storage: 1e-5, see the tests).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm

from ehi.core.io import atomic_dir
from ehi.model.embed_cache import texts_digest
from ehi.model.encoder import Encoder, mean_pool

DTYPES = {"float16": np.float16, "float32": np.float32}


def _layers(encoder: Encoder):
    layers = encoder.model.encoder.layer
    return encoder.model.embeddings, layers


def _mask(encoder: Encoder, hidden: torch.Tensor, attention_mask: torch.Tensor):
    from transformers.masking_utils import create_bidirectional_mask  # heavy; only frozen runs need it

    return create_bidirectional_mask(config=encoder.model.config, inputs_embeds=hidden, attention_mask=attention_mask)


def freeze_bottom(encoder: Encoder, k: int) -> None:
    """No gradient for the embeddings and the bottom ``k`` layers."""
    embeddings, layers = _layers(encoder)
    if not 0 < k <= len(layers):
        raise ValueError(f"freeze_layers must be in 1..{len(layers)} for this encoder, got {k}")
    for module in [embeddings, *layers[:k]]:
        for p in module.parameters():
            p.requires_grad_(False)


class LayerCache:
    """Hidden states after the frozen layers: ``hidden`` (T, d) rows, text i = offsets[i]:offsets[i+1]."""

    def __init__(self, hidden: np.ndarray, offsets: np.ndarray, k: int):
        self.hidden, self.offsets, self.k = hidden, offsets, k

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def batch(self, rows, device) -> tuple[torch.Tensor, torch.Tensor]:
        """Padded float32 hidden states (b, L, d) and the attention mask (b, L) of ``rows``."""
        lengths = self.offsets[np.asarray(rows) + 1] - self.offsets[np.asarray(rows)]
        out = np.zeros((len(lengths), int(lengths.max()), self.hidden.shape[1]), dtype=np.float32)
        mask = np.zeros(out.shape[:2], dtype=np.int64)
        for i, (r, n) in enumerate(zip(rows, lengths)):
            out[i, :n] = self.hidden[self.offsets[r] : self.offsets[r] + n]
            mask[i, :n] = 1
        return torch.from_numpy(out).to(device), torch.from_numpy(mask).to(device)


def _fingerprint(encoder: Encoder, texts: list[str], k: int, dtype: str) -> dict:
    weights = hashlib.sha256()
    embeddings, layers = _layers(encoder)
    for module in [embeddings, *layers[:k]]:
        for p in module.parameters():
            weights.update(p.detach().cpu().numpy().tobytes())
    return {"texts": texts_digest(texts), "n": len(texts), "k": k, "dtype": dtype,
            "max_length": encoder.max_length, "frozen_weights": weights.hexdigest()}


@torch.no_grad()
def bottom_forward(encoder: Encoder, texts: list[str], k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Embeddings + the bottom k layers of a batch of texts -> hidden (b, L, d), mask (b, L)."""
    batch = encoder.tokenize(texts)
    embeddings, layers = _layers(encoder)
    hidden = embeddings(input_ids=batch["input_ids"], token_type_ids=batch.get("token_type_ids"))
    mask4 = _mask(encoder, hidden, batch["attention_mask"])
    for layer in layers[:k]:
        hidden = layer(hidden, mask4)
    return hidden, batch["attention_mask"]


def build_layer_cache(encoder: Encoder, texts: list[str], k: int, path: str | os.PathLike, dtype: str = "float16",
                      batch_size: int = 64, progress: bool = False) -> LayerCache:
    """The cache of ``texts`` under ``path``: reused when its fingerprint matches, else computed."""
    path, meta = Path(path), _fingerprint(encoder, texts, k, dtype)
    with _build_lock(path):  # trainings sharing a cache start together: one builds, the others wait for it
        if not (path / "meta.json").exists() or json.loads((path / "meta.json").read_text()) != meta:
            _build(encoder, texts, k, path, dtype, batch_size, progress, meta)
    return LayerCache(np.load(path / "hidden.npy", mmap_mode="r"), np.load(path / "offsets.npy"), k)


@contextlib.contextmanager
def _build_lock(path: Path):
    """An exclusive lock beside the cache folder, held while it is checked and built (no-op where
    the platform has no ``fcntl``: there each training builds its own copy, as without sharing)."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.parent / f".{path.name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _build(encoder: Encoder, texts: list[str], k: int, path: Path, dtype: str, batch_size: int, progress: bool,
           meta: dict) -> None:
    was_training = encoder.training
    encoder.eval()
    order = np.argsort([-len(t) for t in texts], kind="stable")
    parts: list[np.ndarray | None] = [None] * len(texts)
    starts = range(0, len(texts), batch_size)
    for start in tqdm(starts, desc=f"layer cache ({path.name})", disable=not progress, mininterval=5):
        idx = order[start : start + batch_size]
        hidden, mask = bottom_forward(encoder, [texts[i] for i in idx], k)
        for j, i in enumerate(idx):
            parts[i] = hidden[j, : int(mask[j].sum())].float().cpu().numpy().astype(DTYPES[dtype])
    encoder.train(was_training)
    offsets = np.concatenate([[0], np.cumsum([len(p) for p in parts])]).astype(np.int64)
    with atomic_dir(path) as tmp:
        np.save(tmp / "hidden.npy", np.concatenate(parts) if parts else np.zeros((0, encoder.dim), DTYPES[dtype]))
        np.save(tmp / "offsets.npy", offsets)
        (tmp / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")


def top_forward(encoder: Encoder, cache: LayerCache, rows) -> torch.Tensor:
    """Unit-norm embeddings of cached texts ``rows``, through the top layers (with gradient)."""
    hidden, mask = cache.batch(rows, encoder.device)
    mask4 = _mask(encoder, hidden, mask)
    for layer in _layers(encoder)[1][cache.k :]:
        hidden = layer(hidden, mask4)
    return mean_pool(hidden, mask)


def encode_rows(encoder: Encoder, texts: list[str], cache: LayerCache | None, rows) -> torch.Tensor:
    """The training forward of ``rows``: from the layer cache when there is one, else from text."""
    if cache is None:
        return encoder([texts[i] for i in rows])
    return top_forward(encoder, cache, rows)


@torch.no_grad()
def encode_all(encoder: Encoder, texts: list[str], cache: LayerCache | None, batch_size: int = 64) -> np.ndarray:
    """Every text's embedding (n, d) float32, eval mode: ``Encoder.encode`` or its cached twin."""
    if cache is None:
        return encoder.encode(texts, batch_size)
    was_training = encoder.training
    encoder.eval()
    lengths = np.diff(cache.offsets)
    order = np.argsort(-lengths, kind="stable")  # similar lengths together: less padding
    out = np.empty((len(texts), encoder.dim), dtype=np.float32)
    for start in range(0, len(texts), batch_size):
        idx = order[start : start + batch_size]
        out[idx] = top_forward(encoder, cache, idx).float().cpu().numpy()
    encoder.train(was_training)
    return out
