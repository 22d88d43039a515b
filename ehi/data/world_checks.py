"""The vector world's knobs checked before anything is allocated (:mod:`ehi.data.vector_world`).

Each knob is refused in one line naming it: a size below one, a weight that is negative, not
finite or beyond :data:`WEIGHT_MAX`, facets larger than the corpus, a dtype the embeddings layout
does not hold, knobs that make every document one vector (a single dimension, where a unit vector
is +1 or -1; no part but the shared mean direction). A world collapsed less plainly (a
``spectrum_decay`` so steep that the map keeps fewer directions than the dtype resolves) is caught
while it is generated, block by block, by :func:`check_distinct`. The sizes are then bounded by what
the world needs: the memory of its generation (:func:`memory_estimate`, against the machine's physical
memory) and the disk of its two arrays (against the free space where it is written), so that a
mistyped ``n_docs`` is refused at once instead of filling the memory or the disk first.
"""

from __future__ import annotations

import dataclasses
import math
import os
import shutil
from pathlib import Path

from ehi.core.errors import ConfigError

SIZES = {"n_docs": 1, "dim": 1, "n_topics": 1, "subtopics_per_topic": 1, "n_train": 1, "n_dev": 0, "n_test": 1,
         "seed": 0}  # knob -> its least value
WEIGHTS = ("spectrum_decay", "mean_weight", "topic_weight", "subtopic_weight", "facet_weight", "doc_noise",
           "query_noise", "asymmetry")  # non-negative reals
PARTS = ("mean_weight", "topic_weight", "subtopic_weight", "facet_weight", "doc_noise")  # what a document is made of
# The largest weight: the levels are unit-scale Gaussian offsets, so a weight of 1e6 already drowns
# every other level; far beyond (1e154) a vector's float64 norm overflows and it is written as zeros
WEIGHT_MAX = 1e6
# Bytes of generation memory: a document's share of the facet table, the row permutation, its id
# string twice (the ids array and the written list), and a judgement's row in the qrels frame
BYTES_PER_DOC, BYTES_PER_JUDGEMENT = 240, 200
BLOCK_COPIES = 4  # float64 arrays of one block alive at once: offsets, noise, the mapped and the unit rows


def _check_knobs(cfg) -> None:
    """The first of the world's knobs that cannot make a world, refused in one line."""
    fault = next((f"vector world {what}" for what in _knob_faults(cfg) if what), None)
    if fault:
        raise ConfigError(fault)


def _knob_faults(cfg):
    """Each knob's fault in the order they are checked (a later test reads the knobs an earlier one
    let through as numbers), None where it holds."""
    from ehi.data.embeddings import DTYPES

    for name, least in SIZES.items():
        value = getattr(cfg, name)
        if not isinstance(value, int) or isinstance(value, bool):
            yield f"{name}: {value!r} is not an integer (write 1000000, not 1e6)"
        yield f"{name}: {value} is below {least}" if value < least else None
    for name in (*WEIGHTS, "mean_relevant"):
        value = getattr(cfg, name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            yield f"{name}: {value!r} is not a finite number >= 0"
        if name in WEIGHTS and value > WEIGHT_MAX:
            yield f"{name}: {value!r} is above {WEIGHT_MAX:g} (the levels are unit-scale offsets)"
    yield f"mean_relevant: {cfg.mean_relevant} is below 1 (a facet holds one document at least)" \
        if cfg.mean_relevant < 1 else None
    yield (f"mean_relevant: {cfg.mean_relevant} is above n_docs {cfg.n_docs} (one facet would hold the whole "
           "corpus, every document relevant to every query)") if cfg.mean_relevant > cfg.n_docs else None
    yield f"{', '.join(PARTS)}: all 0, every document would be the zero vector" \
        if all(getattr(cfg, name) == 0 for name in PARTS) else None
    yield (f"{', '.join(PARTS[1:])}: all 0, every document would be the shared mean direction (one distinct "
           "vector)") if all(getattr(cfg, name) == 0 for name in PARTS[1:]) else None
    yield (f"dim: {cfg.dim} gives 2 distinct vectors at most (a unit vector in one dimension is +1 or -1); "
           "use 2 or more") if cfg.dim < 2 else None
    yield f"dtype: {cfg.dtype!r} is not one of {sorted(DTYPES)}" if cfg.dtype not in DTYPES else None


def check_distinct(cfg, drawn, rows, block: int) -> None:
    """Refuse a block whose written document ``rows`` (mapped, unit-normalised, cast to the dtype)
    hold fewer distinct vectors than the points ``drawn`` for them: documents the knobs made apart
    that the map or the dtype merged, so that no search can tell them apart. It costs about 0.5 s
    per 10^5 x 384 float32 documents (a set of the rows' bytes): a 10^5-document world took 6.5 s
    to generate where it took 5.6 s unchecked."""
    import numpy as np

    written = _distinct_rows(rows)
    made = written if written == len(rows) else _distinct_rows(drawn)  # drawn rows repeat only without doc_noise
    if written < made:
        raise ConfigError(f"vector world spectrum_decay/dim/dtype: the generated documents collapse, {written} "
                          f"distinct vectors where {made} were drawn (block {block}): spectrum_decay "
                          f"{cfg.spectrum_decay} leaves fewer directions than {cfg.dtype} resolves in {cfg.dim} "
                          f"dimensions (the i-th is scaled by i ** -{cfg.spectrum_decay}, "
                          f"{2.0 ** -float(cfg.spectrum_decay):.1e} at the second; {cfg.dtype} resolves "
                          f"{float(np.finfo(rows.dtype).eps):.1e})")


def _distinct_rows(a) -> int:
    """Distinct rows of ``a``, by their bytes (a set of them: sorting the rows instead costs 10x)."""
    import numpy as np

    return len(set(map(bytes, np.ascontiguousarray(a))))


def memory_estimate(cfg) -> int:
    """Bytes of memory the generation holds at its peak, the arrays aside (they are memory-mapped):
    the d x d map and the level offsets, the per-document tables and ids, the qrels, one block."""
    d = cfg.dim
    geometry = 8 * (2 * d * d + d * cfg.n_topics * (2 + cfg.subtopics_per_topic))
    block_rows = 4096 * (cfg.mean_relevant + 3 * math.sqrt(cfg.mean_relevant))  # BLOCK_FACETS facets, generously
    block = 8 * BLOCK_COPIES * d * (block_rows + cfg.n_train + cfg.n_dev + cfg.n_test)
    judgements = (cfg.n_train + cfg.n_dev + cfg.n_test) * cfg.mean_relevant
    return int(geometry + block + BYTES_PER_DOC * cfg.n_docs + BYTES_PER_JUDGEMENT * judgements)


def disk_estimate(cfg) -> int:
    """Bytes of the two arrays on disk (ids and qrels are small beside them)."""
    from ehi.data.embeddings import DTYPES

    import numpy as np

    return (cfg.n_docs + cfg.n_train + cfg.n_dev + cfg.n_test) * cfg.dim * np.dtype(DTYPES[cfg.dtype]).itemsize


def _physical_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def _gib(n: float) -> str:
    return f"{n / 2 ** 30:.1f} GiB"


def check_world(cfg, out_dir: str | os.PathLike | None = None) -> None:
    """Refuse, in one line naming the knob, a world that cannot be generated as configured."""
    _check_knobs(cfg)
    need, have = memory_estimate(cfg), _physical_memory()
    if have is not None and need > have:
        raise ConfigError(f"vector world n_docs/dim/queries: generating {cfg.n_docs} x {cfg.dim} needs about "
                          f"{_gib(need)} of memory, more than this machine's {_gib(have)}")
    if out_dir is not None:
        where = Path(out_dir).resolve()
        while not where.exists():
            where = where.parent
        free, size = shutil.disk_usage(where).free, disk_estimate(cfg)
        if size > free:
            raise ConfigError(f"vector world n_docs/dim: its arrays need {_gib(size)} of disk, {where} has "
                              f"{_gib(free)} free")


def clear_stale_writes(out_dir: str | os.PathLike) -> None:
    """Remove what a generator killed into ``out_dir`` left beside it (a half-written world, made
    aside by :func:`ehi.core.io.atomic_dir`): at 10^6 x 384 each is 1.5 GB of disk."""
    out = Path(out_dir)
    for stale in out.parent.glob(f".{out.name}.*.tmp") if out.parent.is_dir() else ():
        shutil.rmtree(stale, ignore_errors=True)


def world_from_cli(pairs: list[str]):
    """The WorldConfig of ``--set KEY=VALUE`` pairs (VALUE in JSON), refused in one line per fault."""
    import json

    from ehi.data.vector_world import WorldConfig

    known = {f.name for f in dataclasses.fields(WorldConfig)}
    values = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or key not in known:
            raise ConfigError(f"--set {pair!r}: expected KEY=VALUE with KEY one of {sorted(known)}")
        try:
            values[key] = json.loads(text)
        except json.JSONDecodeError:
            values[key] = text if key == "dtype" else None
            if values[key] is None:
                raise ConfigError(f"--set {pair!r}: {text!r} is not a JSON value (a number, or a quoted string)") from None
    return WorldConfig.from_dict(values)
