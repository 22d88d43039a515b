"""What an encoder is, as a rule param: its name, and for a local folder a digest of what it holds.

Snakemake reruns a job whose params changed, so a rule whose output depends on the encoder (rule
``embed`` of the untrained encoder, the trainings that start from it) carries
:func:`encoder_identity` as a param: naming another encoder, or changing the files of a folder
kept under the same name (a tower retrained in place, a vectors folder written again), reruns it.

A file up to ``WHOLE_FILE_BYTES`` enters the digest whole; a larger one (a 10^6-row vectors array)
by its size and its first and last ``SAMPLE_BYTES``, so that a parse stays fast at any scale.
Nothing enters that a copy of the folder would change (no mtimes, no absolute paths but the
vectors a tower names).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

WHOLE_FILE_BYTES = 64 << 20
SAMPLE_BYTES = 4 << 20
TOWER_SPEC = "tower.json"  # ehi.model.tower.SPEC (this module imports no torch)


def _file_digest(path: Path, digest) -> None:
    size = path.stat().st_size
    digest.update(f"{size}\0".encode())
    with open(path, "rb") as f:
        if size <= WHOLE_FILE_BYTES:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        else:
            digest.update(f.read(SAMPLE_BYTES))
            f.seek(size - SAMPLE_BYTES)
            digest.update(f.read(SAMPLE_BYTES))


def folder_digest(folder: str | os.PathLike) -> str:
    """sha256 (24 hex digits) over every file of ``folder`` (relative path, size, contents as above),
    and, for a tower folder, over the vectors folder its ``tower.json`` names."""
    folder = Path(folder)
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(f"{path.relative_to(folder).as_posix()}\0".encode())
        _file_digest(path, digest)
    spec = folder / TOWER_SPEC
    if spec.is_file():
        try:
            vectors = json.loads(spec.read_text()).get("vectors")
        except (OSError, ValueError, AttributeError):
            vectors = None  # the tower's loader names a broken spec
        if vectors and Path(vectors).is_dir() and Path(vectors).resolve() != folder.resolve():
            digest.update(folder_digest(vectors).encode())
    return digest.hexdigest()[:24]


def encoder_identity(name: str) -> str:
    """``name``, with ``@<digest>`` of its files where it is a local folder (a hub id or a built-in
    alias is its name: its weights are pinned elsewhere, ehi.core.pretrained and the hub cache)."""
    path = Path(str(name))
    return f"{name}@{folder_digest(path)}" if path.is_dir() else str(name)


def identity_name(identity: str) -> str:
    """The encoder name an :func:`encoder_identity` was made of (its ``@<digest>`` dropped)."""
    name, sep, _ = str(identity).rpartition("@")
    return name if sep and Path(name).is_dir() else str(identity)
