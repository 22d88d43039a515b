"""Checked loading of safetensors weights into a module: a clear error instead of a stack trace.

safetensors never unpickles, so a corrupted file cannot run code; it can still be truncated (a
killed copy, a full disk) or belong to another model (a tree of another shape, another encoder).
:func:`load_weights` turns each case into a :class:`WeightsError` that names the file and, for a
mismatch, every tensor whose name or shape differs, and any tensor holding NaN or inf, before the
module is touched.
"""

from __future__ import annotations

import os
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file

from ehi.core.errors import UserError, WeightsError


def read_tensors(path: str | os.PathLike) -> dict[str, torch.Tensor]:
    """All tensors of one safetensors file; a missing, truncated or corrupted file is named."""
    path = Path(path)
    if not path.exists():
        raise WeightsError(f"{path}: weights file missing")
    try:
        return load_file(str(path))
    except (SafetensorError, OSError, ValueError) as e:
        raise WeightsError(f"{path}: not a readable safetensors file (truncated or corrupted?): {e}") from e


def shape_problems(expected: dict[str, tuple], saved: dict[str, tuple]) -> list[str]:
    """Each tensor whose shape differs, that ``saved`` lacks, or that the model has no place for."""
    problems = [f"{k}: saved {saved[k]}, model expects {expected[k]}"
                for k in sorted(expected.keys() & saved.keys()) if saved[k] != expected[k]]
    problems += [f"{k}: missing from the file" for k in sorted(expected.keys() - saved.keys())]
    problems += [f"{k}: not in the model" for k in sorted(saved.keys() - expected.keys())]
    return problems


def summarise(problems: list[str], shown: int = 5) -> str:
    """The first ``shown`` problems on one line, with the total when there are more."""
    more = f"; ... ({len(problems)} in all)" if len(problems) > shown else ""
    return "; ".join(problems[:shown]) + more


def check_compatible(module: torch.nn.Module, tensors: dict[str, torch.Tensor], source: str) -> None:
    """Raise :class:`WeightsError` naming each missing, unexpected or differently shaped tensor."""
    expected = {k: tuple(v.shape) for k, v in module.state_dict().items()}
    problems = shape_problems(expected, {k: tuple(v.shape) for k, v in tensors.items()})
    if problems:
        raise WeightsError(f"{source} was written for another model configuration: {summarise(problems)}")


def load_weights(module: torch.nn.Module, *paths: str | os.PathLike) -> None:
    """Load the union of ``paths`` (e.g. sharded model files) into ``module``, checked first."""
    tensors: dict[str, torch.Tensor] = {}
    for p in paths:
        tensors.update(read_tensors(p))
    source = ", ".join(str(p) for p in paths) if paths else "(no weights file)"
    check_compatible(module, tensors, source)
    check_finite(tensors, source)
    module.load_state_dict(tensors)


def check_finite(tensors: dict[str, torch.Tensor], source: str, error: type[UserError] = WeightsError) -> None:
    """Raise ``error`` naming each floating tensor holding NaN or inf: such weights
    route or score every input the same wrong way, without failing."""
    # a finite sum proves the tensor finite (NaN and inf propagate) at a fraction of an elementwise
    # test; only a tensor whose sum is not finite (or overflowed) is tested value by value
    bad = [f"{k} ({int((~torch.isfinite(v)).sum())} of {v.numel()} values)" for k, v in sorted(tensors.items())
           if v.is_floating_point() and not torch.isfinite(v.sum()) and not torch.isfinite(v).all()]
    if bad:
        raise error(f"{source}: NaN or inf in {summarise(bad)}")
