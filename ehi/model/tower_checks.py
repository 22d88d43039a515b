"""A tower folder checked before any job: its ``tower.json``, its weights, and the vectors it names.

A tower (:mod:`ehi.model.tower`) reads whatever vectors its ``tower.json`` names, and another
folder of the same shape trains and evaluates as if it were the dataset's own, to a score of
nothing. So, while the Snakefile is parsed (``snakemake -n`` included), the vectors a tower names
must be the dataset's: the same folder, or one with the same ids, the same width and the same
content (the sha256 the producer's ``embeddings.json`` records, else the files' own). The spec's
keys and values, and a linear tower's weights (a zero matrix maps every vector to one point), are
checked here too, each refused in one line naming the file.

Kept light (the Snakefile imports it on every parse): json, numpy and safetensors' numpy reader.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from ehi.core.errors import ConfigError

SPEC = "tower.json"
KINDS = ("identity", "linear", "mlp")
SPEC_TYPES = {"vectors": str, "kind": str, "shared": bool, "hidden": int, "dim": int}  # dim: a saved tower's width
IDS = ("doc_ids.txt", "query_ids.txt")
ARRAYS = ("docs", "queries")


def read_tower_spec(folder: str | os.PathLike) -> dict:
    """``tower.json`` of ``folder``, its keys and values checked."""
    path = Path(folder) / SPEC
    try:
        spec = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise ConfigError(f"{path}: not a readable JSON tower spec ({err})") from None
    fault = next((what for what in _spec_faults(spec) if what), None)
    if fault:
        raise ConfigError(f"{path}: {fault}")
    # a saved tower knows its width (dim) and searches query vectors without its vectors folder
    docs = _array_file(Path(spec["vectors"]), "docs")
    if "dim" not in spec and not docs:
        raise ConfigError(f"{path}: vectors {spec['vectors']!r} is not an embeddings folder (no docs.npy or docs.safetensors)")
    width = _width(docs) if docs else None
    if "dim" in spec and (spec["dim"] < 1 or width not in (None, spec["dim"])):
        raise ConfigError(f"{path}: dim is {spec['dim']}, but its vectors {spec['vectors']!r} are {width}-d"
                          if spec["dim"] >= 1 else f"{path}: dim is {spec['dim']}, below 1")
    return spec


def _spec_faults(spec):
    """The spec's faults in the order they are checked (a later test reads what an earlier one let
    through), None where it holds."""
    if not isinstance(spec, dict):
        yield f"a JSON {type(spec).__name__}, not an object of {sorted(SPEC_TYPES)}"
        return
    unknown = sorted(set(spec) - set(SPEC_TYPES))
    if unknown or "vectors" not in spec:
        yield (f"{'unknown key(s) ' + str(unknown) if unknown else 'no vectors'}; "
               f"expected {sorted(SPEC_TYPES)} (vectors required)")
    for key, kind in SPEC_TYPES.items():
        value = spec.get(key)
        if key in spec and (not isinstance(value, kind) or (kind is int and isinstance(value, bool))):
            yield f"{key} is {value!r}, not a {kind.__name__}"
    yield f"kind {spec['kind']!r} is not one of {KINDS}" if spec.get("kind", "identity") not in KINDS else None
    yield f"hidden is {spec['hidden']}, below 0" if spec.get("hidden", 0) < 0 else None


def _array_file(root: Path, kind: str) -> Path | None:
    return next((root / f"{kind}{ext}" for ext in (".npy", ".safetensors") if (root / f"{kind}{ext}").is_file()), None)


def _width(path: Path) -> int | None:
    if path.suffix == ".npy":
        try:
            shape = np.load(path, mmap_mode="r").shape
        except (OSError, ValueError):
            return None  # the dataset's own checks name an unreadable array
        return int(shape[1]) if len(shape) == 2 else None
    return None  # a safetensors array: its width is checked when it is read


def _sha256(root: Path, name: str) -> str:
    recorded = _recorded_hashes(root).get(name)
    if recorded:
        return recorded
    from ehi.core.io import file_sha256

    return file_sha256(root / name)


def _recorded_hashes(root: Path) -> dict:
    try:
        hashes = json.loads((root / "embeddings.json").read_text()).get("sha256", {})
    except (OSError, ValueError, AttributeError):
        return {}
    return hashes if isinstance(hashes, dict) else {}


def _difference(tower: Path, own: Path) -> str | None:
    """How the vectors at ``tower`` differ from the dataset's at ``own``, or None."""
    for name in IDS:
        if not (tower / name).is_file() or (tower / name).read_bytes() != (own / name).read_bytes():
            return f"its {name} is not the dataset's"
    for kind in ARRAYS:
        mine, theirs = _array_file(tower, kind), _array_file(own, kind)
        if mine is None or theirs is None or mine.suffix != theirs.suffix:
            return f"its {kind} array is not stored as the dataset's"
        if _width(mine) != _width(theirs):
            return f"its {kind} are {_width(mine)}-d, the dataset's {_width(theirs)}-d"
        if mine.stat().st_size != theirs.stat().st_size or _sha256(tower, mine.name) != _sha256(own, theirs.name):
            return f"its {mine.name} holds other vectors than the dataset's (sha256 differs)"
    return None


def expected_shapes(spec: dict, dim: int) -> dict[str, tuple[int, ...]]:
    """{tensor: shape} of a tower of ``spec``'s kind over ``dim``-d vectors (ehi.model.tower's blocks)."""
    kind, hidden = spec.get("kind", "identity"), spec.get("hidden", 0) or dim
    if kind == "identity":
        return {}
    block = ({"weight": (dim, dim), "bias": (dim,)} if kind == "linear" else
             {"up.weight": (hidden, dim), "up.bias": (hidden,), "down.weight": (dim, hidden), "down.bias": (dim,)})
    sides = ("tower",) if spec.get("shared", True) else ("docs", "queries")
    return {f"{side}.{name}": shape for side in sides for name, shape in block.items()}


def check_tower_weights(folder: Path, spec: dict) -> None:
    """A tower's saved weights: finite, of the shapes its kind has over its vectors' width, and, for a
    linear tower, no all-zero weight matrix (which maps every vector to its bias: one point)."""
    weights = folder / "model.safetensors"
    if not weights.is_file():
        return
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    try:
        tensors = load_file(str(weights))
    except (SafetensorError, OSError, ValueError) as err:
        raise ConfigError(f"{weights}: not a readable safetensors file ({err})") from None
    for name, tensor in tensors.items():
        if not np.all(np.isfinite(tensor)):
            raise ConfigError(f"{weights}: {name} holds NaN or infinite values")
    docs = _array_file(Path(spec["vectors"]), "docs")
    dim = spec.get("dim") or (_width(docs) if docs else None)
    if dim:
        shapes = {name: tuple(tensor.shape) for name, tensor in tensors.items()}
        expected = expected_shapes(spec, dim)
        if shapes != expected:
            wrong = sorted(n for n in set(shapes) | set(expected) if shapes.get(n) != expected.get(n))
            raise ConfigError(f"{weights}: not the weights of a {spec.get('kind', 'identity')} tower over {dim}-d "
                              f"vectors: " + ", ".join(f"{n} {shapes.get(n)} (expected {expected.get(n)})" for n in wrong))
    for name, tensor in tensors.items():
        if spec.get("kind") == "linear" and name.endswith("weight") and tensor.ndim == 2 and not np.any(tensor):
            raise ConfigError(f"{weights}: {name} is all zeros: the tower maps every vector to one point")


def _check_vectors(where: str, tower: str, named: Path, dataset: dict) -> None:
    """Refuse the vectors ``named`` that ``tower`` reads where they are not the embeddings dataset's
    own; ``where`` names the config key."""
    if dataset.get("source") != "embeddings":
        raise ConfigError(f"config {where}: {tower} is a vector tower, which reads datasets of source embeddings "
                          f"only; dataset.source is {dataset.get('source')!r}")
    own = Path(dataset.get("path") or "").expanduser()
    if not own.is_dir() or not named.is_dir() or own.resolve() == named.resolve():
        return  # a missing dataset folder is named by the source's own check; a produced one is not there yet
    why = _difference(named, own)
    if why is not None:
        raise ConfigError(f"config {where}: the tower {tower} reads the vectors of {named}, not the dataset's "
                          f"({own}): {why}")


def check_tower(encoder_name: str, dataset: dict, towers: dict | None = None) -> None:
    """Refuse a tower folder named by ``encoder.name`` whose spec, weights or vectors cannot serve
    ``dataset`` (the config's dataset section); anything else is left alone. A tower a ``towers``
    entry writes is checked by its entry: its ``tower.json`` may not be written yet, or be rewritten."""
    from ehi.data.produced import produced_folders

    folder = Path(encoder_name).expanduser()
    entry = produced_folders({"towers": towers or {}}).get(os.path.normpath(str(encoder_name)))
    if entry is not None:
        _check_vectors(f"towers.{entry[1]}.vectors", str(folder), Path(towers[entry[1]]["vectors"]).expanduser(), dataset)
        return
    if not (folder / SPEC).is_file():
        return
    spec = read_tower_spec(folder)
    check_tower_weights(folder, spec)
    _check_vectors("encoder.name", str(folder), Path(spec["vectors"]).expanduser(), dataset)
