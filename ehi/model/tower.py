"""The encoder of precomputed vectors: a tower over an embeddings folder (docs/embeddings.md).

On ``dataset.source: embeddings`` a text is a key into the folder's arrays (``d:<row>``,
``q:<row>``), and this module is what the pipeline trains and embeds with in place of a
transformer: it reads the rows and maps them through a tower, then unit-normalises them, as the
sentence encoders' mean pooling is followed by normalisation. Towers:

- ``identity``: no weights; the vectors as given (the frozen-encoder recipe on them);
- ``linear``: a d x d map started at the identity;
- ``mlp``: a residual MLP, ``x + W2 gelu(W1 x)``, with W2 started at zero (so also the identity).

``shared: false`` gives documents and queries one tower each (an asymmetric dual encoder). A
tower folder holds ``tower.json`` (the vectors' folder, kind, shared, hidden) and, when it has
weights, ``model.safetensors``; ``encoder.name`` is such a folder, or an embeddings folder itself
(the identity tower). ``train.freeze_layers`` > 0 freezes the whole tower: the tree trains alone.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ehi.data.embeddings import DOC_KEY, QUERY_KEY, load_arrays
from ehi.core.errors import ConfigError
from ehi.core.io import write_json
from ehi.model.tower_checks import KINDS, SPEC, check_tower_weights, read_tower_spec

log = logging.getLogger(__name__)


def is_tower_folder(path: str | os.PathLike) -> bool:
    """A tower folder, or an embeddings folder (its identity tower)."""
    p = Path(path)
    return (p / SPEC).is_file() or (p / "doc_ids.txt").is_file()


def _block(kind: str, dim: int, hidden: int) -> nn.Module:
    if kind == "identity":
        return nn.Identity()
    if kind == "linear":
        layer = nn.Linear(dim, dim)
        with torch.no_grad():
            layer.weight.copy_(torch.eye(dim))
            layer.bias.zero_()
        return layer
    return _ResidualMLP(dim, hidden or dim)


class _ResidualMLP(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.up, self.down = nn.Linear(dim, hidden), nn.Linear(hidden, dim)
        nn.init.zeros_(self.down.weight)
        nn.init.zeros_(self.down.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.down(F.gelu(self.up(x)))


class VectorTower(nn.Module):
    """Row keys -> unit-norm vectors through a tower; the interface of :class:`ehi.model.encoder.Encoder`."""

    precomputed = True  # no layer cache: the vectors are the frozen layers' output

    def __init__(self, vectors: str | os.PathLike, kind: str = "identity", shared: bool = True, hidden: int = 0,
                 name: str = "tower", seed: int = 0, dim: int | None = None):
        super().__init__()
        if kind not in KINDS:
            raise ConfigError(f"tower kind {kind!r}: expected one of {KINDS}")
        self.vectors, self.kind, self.shared, self.hidden = str(Path(vectors).resolve()), kind, shared, hidden
        # the arrays are opened on first use: a saved tower maps query vectors (encode_vectors, a
        # search index's --query-vectors) without the folder it was trained on
        self._arrays = None if dim else load_arrays(self.vectors)
        self._dim = int(dim) if dim else int(self._arrays[0].shape[1])
        self.name, self.max_length = name, 0
        torch.manual_seed(seed)
        d = self.dim
        self.model = (nn.ModuleDict({"tower": _block(kind, d, hidden)}) if shared else
                      nn.ModuleDict({"docs": _block(kind, d, hidden), "queries": _block(kind, d, hidden)}))
        self.register_buffer("_anchor", torch.zeros(0), persistent=False)

    @property
    def docs(self):
        return self._rows()[0]

    @property
    def queries(self):
        return self._rows()[1]

    def _rows(self):
        if self._arrays is None:
            self._arrays = load_arrays(self.vectors)
        return self._arrays

    @property
    def tokenizer(self) -> str:
        """What the embedding cache keys besides the weights: which vectors, as last written."""
        stat = Path(self.vectors, "docs.npy")
        stat = stat if stat.exists() else Path(self.vectors, "docs.safetensors")
        return f"vectors {self.vectors} {stat.stat().st_size} {stat.stat().st_mtime_ns}"

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def device(self) -> torch.device:
        return self._anchor.device

    def _block_of(self, query: bool) -> nn.Module:
        return self.model["tower"] if self.shared else self.model["queries" if query else "docs"]

    def _side(self, rows: np.ndarray, query: bool) -> torch.Tensor:
        table = self.queries if query else self.docs
        x = torch.from_numpy(np.asarray(table[rows], dtype=np.float32)).to(self.device)
        return F.normalize(self._block_of(query)(x), dim=-1)

    def forward(self, texts: list[str]) -> torch.Tensor:
        keys = list(texts)
        is_query = np.array([k.startswith(QUERY_KEY) for k in keys])
        if not all(k.startswith((DOC_KEY, QUERY_KEY)) for k in keys):
            bad = next(k for k in keys if not k.startswith((DOC_KEY, QUERY_KEY)))
            raise ValueError(f"{self.vectors}: text {bad[:40]!r} is not a row key (d:<row> or q:<row>); "
                             "a vector tower reads datasets of source embeddings only")
        rows = np.array([int(k[2:]) for k in keys], dtype=np.int64)
        out = torch.empty((len(keys), self.dim), device=self.device)
        for query in (False, True):
            pick = np.flatnonzero(is_query == query)
            if len(pick):
                out[torch.from_numpy(pick).to(self.device)] = self._side(rows[pick], query)
        return out

    @torch.no_grad()
    def encode(self, texts: list[str], batch_size: int = 64, progress: bool | str = False) -> np.ndarray:
        was_training = self.training
        self.eval()
        texts = list(texts)
        step = max(batch_size, 4096)  # a tower is cheap: large batches, whatever the text encoder's size
        out = np.concatenate([self.forward(texts[i:i + step]).cpu().numpy() for i in range(0, len(texts), step)]
                             or [np.empty((0, self.dim), np.float32)])
        self.train(was_training)
        return out.astype(np.float32)

    @torch.no_grad()
    def encode_vectors(self, vectors: np.ndarray, query: bool = True) -> np.ndarray:
        """Vectors of the folder's kind (not row keys) through one side of the tower, unit-normalised:
        new queries encoded elsewhere by the same model, searched without the folder."""
        x = np.array(vectors, dtype=np.float32)  # a copy: a memory-mapped file is read-only, a tensor is not
        if x.ndim != 2 or x.shape[1] != self.dim:
            raise ValueError(f"query vectors of shape {x.shape}: the tower maps (n, {self.dim}) arrays")
        out = self._block_of(query)(torch.from_numpy(x).to(self.device))
        return F.normalize(out, dim=-1).cpu().numpy().astype(np.float32)

    def spec(self) -> dict:
        return {"vectors": self.vectors, "kind": self.kind, "shared": self.shared, "hidden": self.hidden,
                "dim": self.dim}

    def save(self, path: str | os.PathLike) -> None:
        from safetensors.torch import save_file

        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        write_json(self.spec(), path / SPEC)
        state = {k: v.detach().cpu().contiguous() for k, v in self.model.state_dict().items()}
        if state:
            save_file(state, str(path / "model.safetensors"))


def write_tower_spec(folder: str | os.PathLike, vectors: str | os.PathLike, kind: str = "identity",
                     shared: bool = True, hidden: int = 0) -> Path:
    """A tower folder without weights: what ``encoder.name`` names to train this tower from its start."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    spec = {"vectors": str(Path(vectors).resolve()), "kind": kind, "shared": shared, "hidden": hidden}
    write_json(spec, folder / SPEC)  # whole or absent: a half-written spec would name no vectors
    return folder


def load_tower(path: str | os.PathLike, seed: int = 0, device: str | torch.device = "cpu") -> VectorTower:
    """The tower of a tower folder (its weights when saved), or an embeddings folder's identity tower."""
    from ehi.core.weights import load_weights

    path = Path(path)
    if not (path / SPEC).is_file():
        return warn_if_constant(VectorTower(path, name=str(path), seed=seed).to(device).eval())
    spec = read_tower_spec(path)
    check_tower_weights(path, spec)
    tower = VectorTower(spec["vectors"], spec.get("kind", "identity"), spec.get("shared", True),
                        spec.get("hidden", 0), name=str(path), seed=seed, dim=spec.get("dim"))
    weights = sorted(path.glob("*.safetensors"))
    if weights:
        load_weights(tower.model, *weights)
    return warn_if_constant(tower.to(device).eval())


CONSTANT_SAMPLE = 256  # documents encoded to tell a tower that maps everything to one point


def warn_if_constant(tower: VectorTower) -> VectorTower:
    """Log a warning naming ``tower`` when its first documents all map to one vector: every search
    on it would rank at chance, which the scores alone would not say. A saved tower searched without
    its vectors folder (query vectors only) has no documents to look at."""
    if tower._arrays is None and not any((Path(tower.vectors) / f"docs{ext}").is_file() for ext in (".npy", ".safetensors")):
        return tower
    n = min(CONSTANT_SAMPLE, len(tower.docs))
    out = tower.encode([f"{DOC_KEY}{i}" for i in range(n)])
    if n > 1 and float(np.ptp(out, axis=0).max()) < 1e-6:
        log.warning("tower %s maps its first %d documents to one vector: every search on it ranks at chance", tower.name, n)
    return tower
