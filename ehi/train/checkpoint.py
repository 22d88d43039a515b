"""Checkpoints of a training run: written atomically each epoch, restored exactly, no pickle.

Everything is safetensors (weights, optimizer moments, RNG states, the embedding cache) plus JSON
(epoch, step, config, scheduler and python RNG state, the epoch log), so a checkpoint loads with
``weights_only`` semantics by construction and a resumed run replays the very same batches.
"""

from __future__ import annotations

import json
import logging
import os
import random
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import torch
from safetensors.torch import save_file

from ehi.core.io import atomic_dir, write_parquet
from ehi.core.weights import WeightsError, load_weights, read_tensors
from ehi.train.batches import EmbeddingCache

log = logging.getLogger(__name__)

# checkpoint/ = encoder/ (HF folder), indexer.{safetensors,json}, trainer_state.safetensors
# (optimizer moments, RNG states), cache.safetensors (only when the next epoch does not re-index),
# state.json (epoch, step, config, optimizer/scheduler scalars, python RNG, log rows).
RESUME_IGNORES = {"device", "encode_batch_size", "diagnostics", "diagnostic_beam"}


def _optimizer_parts(opt_state: dict, prefix: str, tensors: dict) -> dict:
    """Split an optimizer state dict into safetensors entries (added to ``tensors``) and JSON."""
    meta = {"param_groups": opt_state["param_groups"], "scalars": {}}
    for pid, entry in opt_state["state"].items():
        for name, value in entry.items():
            if torch.is_tensor(value):
                tensors[f"{prefix}.{pid}.{name}"] = value.detach().cpu().contiguous()
            else:
                meta["scalars"][f"{pid}.{name}"] = value
    return meta


def _optimizer_state(tensors: dict, meta: dict, prefix: str) -> dict:
    """The inverse of :func:`_optimizer_parts`."""
    state: dict = {}
    entries = [(k[len(prefix) + 1:], v) for k, v in tensors.items() if k.startswith(prefix + ".")]
    for key, value in entries + list(meta["scalars"].items()):
        pid, name = key.split(".", 1)
        state.setdefault(int(pid), {})[name] = value
    return {"state": state, "param_groups": meta["param_groups"]}


def save_checkpoint(path, encoder, indexer, opt, sched, cfg, epoch, step, rows, cache, tree_updates=None,
                    step_rows=()) -> None:
    """``tree_updates``: the run's :class:`ehi.train.tree_updates.TreeUpdates` (its optimizer), or None;
    ``step_rows``: the step log's rows so far (ehi.train.step_log)."""
    with atomic_dir(path) as tmp:
        encoder.save(tmp / "encoder")
        if indexer is not None:
            indexer.save(tmp)
        tensors = {}
        opt_meta = _optimizer_parts(opt.state_dict(), "optimizer", tensors)
        extra = {}
        if tree_updates is not None:
            tree_state, done = tree_updates.state()
            extra["tree_optimizer"] = {**_optimizer_parts(tree_state, "tree_optimizer", tensors), "done": done}
        tensors["rng.torch"] = torch.get_rng_state()
        for i, s in enumerate(torch.cuda.get_rng_state_all() if torch.cuda.is_available() else []):
            tensors[f"rng.cuda.{i}"] = s
        save_file(tensors, str(tmp / "trainer_state.safetensors"))
        if cache is not None:
            save_file({k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in cache.arrays().items()},
                      str(tmp / "cache.safetensors"))
        state = {"epoch": epoch, "step": step, "config": cfg.to_dict(), "optimizer": opt_meta,
                 "scheduler": sched.state_dict(), "python_random": random.getstate(), "log": rows, **extra}
        if step_rows:
            state["step_log"] = list(step_rows)
        (tmp / "state.json").write_text(json.dumps(state, indent=1) + "\n")  # keeps log column order


def load_checkpoint(path, encoder, indexer, opt, sched, cfg, tree_updates=None) -> dict | None:
    """Restore everything :func:`save_checkpoint` wrote; None when there is no checkpoint."""
    path = Path(path)
    if not (path / "state.json").exists():  # a kill between atomic_dir's two renames
        path = path.parent / f".{path.name}.old"
        if not (path / "state.json").exists():
            return None
    try:
        state = json.loads((path / "state.json").read_text())
    except json.JSONDecodeError as e:
        raise WeightsError(f"{path / 'state.json'}: corrupted checkpoint state ({e}); delete {path} to "
                         "restart the run from scratch") from e
    diff = config_diff(state["config"], cfg)
    if diff:
        raise ValueError(f"checkpoint {path} was written with another config (saved, now): {diff}; "
                         "use a new output directory or resume=False")
    # checked loads: a truncated file or one of another shape is named, not a stack trace
    load_weights(encoder.model, *sorted((path / "encoder").glob("*.safetensors")))
    if indexer is not None:
        load_weights(indexer, path / "indexer.safetensors")
    t = read_tensors(path / "trainer_state.safetensors")
    opt.load_state_dict(_optimizer_state(t, state["optimizer"], "optimizer"))
    if tree_updates is not None and "tree_optimizer" in state:
        tree_updates.load_state(_optimizer_state(t, state["tree_optimizer"], "tree_optimizer"),
                                state["tree_optimizer"]["done"])
    sched.load_state_dict(state["scheduler"])
    torch.set_rng_state(t["rng.torch"])
    if torch.cuda.is_available() and "rng.cuda.0" in t:
        torch.cuda.set_rng_state_all([t[f"rng.cuda.{i}"] for i in range(torch.cuda.device_count())])
    version, inner, gauss = state["python_random"]
    random.setstate((version, tuple(inner), gauss))
    cache = None
    if (path / "cache.safetensors").exists():
        arrays = read_tensors(path / "cache.safetensors")
        cache = EmbeddingCache.from_arrays({k: v.numpy().copy() for k, v in arrays.items()})
    log.info("resumed from %s at epoch %d, step %d", path, state["epoch"], state["step"])
    return {"epoch": state["epoch"], "step": state["step"], "cache": cache, "log": state["log"],
            "step_log": state.get("step_log", [])}


def config_diff(saved: dict, cfg) -> dict:
    """The settings a checkpoint's config differs in from ``cfg`` (saved, now), beyond
    RESUME_IGNORES. A key the checkpoint lacks was written before the key existed: its run had the
    key's default behaviour."""
    now, defaults = cfg.to_dict(), type(cfg).defaults()
    diff = {k: (saved.get(k, defaults.get(k)), v) for k, v in now.items()
            if k not in RESUME_IGNORES and saved.get(k, defaults.get(k)) != v}
    diff.update({k: (v, None) for k, v in saved.items() if k not in now and k not in RESUME_IGNORES})
    return diff


def write_log(rows: list[dict], path: Path, cfg, kind: str = "train_log") -> None:
    """A training log (the epoch log; ``kind="step_log"``: ehi.train.step_log's) as Parquet,
    atomically, with provenance in its metadata."""
    table = pa.Table.from_pandas(pd.DataFrame(rows), preserve_index=False)
    write_parquet(table, path, {"kind": kind, "config": cfg.to_dict()})


def set_aside_stale_checkpoint(out_dir: str | os.PathLike, cfg) -> Path | None:
    """Rename ``out_dir/checkpoint`` to ``checkpoint.stale-N`` if another config wrote it.

    The workflow reruns training when its config changes; resuming would then fail (rightly: the
    weights belong to another run). The old checkpoint is kept, not deleted, and the path returned.
    """
    path = Path(out_dir) / "checkpoint"
    state_file = path / "state.json"
    if not state_file.exists():
        return None
    diff = sorted(config_diff(json.loads(state_file.read_text())["config"], cfg))
    if not diff:
        return None
    n = 1
    while (stale := path.with_name(f"checkpoint.stale-{n}")).exists():
        n += 1
    os.replace(path, stale)
    log.warning("checkpoint %s was written with another config (keys %s): moved to %s", path, diff, stale)
    return stale


# What a finished run leaves in its folder, kept under previous/ too (see keep_previous_model)
MODEL_FILES = ("encoder", "indexer.safetensors", "indexer.json", "train_summary.json", "train_log.parquet")
PREVIOUS = "previous"


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)  # no second copy on disk: the finished files are never written again
    except OSError:
        shutil.copy2(src, dst)


def keep_previous_model(out_dir: str | os.PathLike) -> Path:
    """Link the finished model of ``out_dir`` into ``out_dir/previous/`` (replacing what was there).

    Snakemake deletes a job's outputs before it reruns it (a changed setting retrains): the links
    keep the last good model, loadable from ``previous/`` (``load_encoder(previous/encoder)``,
    ``load_indexer(previous)``), if that retraining fails. Every writer replaces files atomically
    (new inodes), so the links never see a half-written file.
    """
    out = Path(out_dir)
    with atomic_dir(out / PREVIOUS) as tmp:
        link_model(out, tmp)
    return out / PREVIOUS


def link_model(source: str | os.PathLike, target: str | os.PathLike, names: tuple[str, ...] = MODEL_FILES) -> None:
    """Hard-link (copy where links fail) a run's model files ``names`` from ``source`` into ``target``,
    replacing what ``target`` held under those names; a name ``source`` lacks is left out."""
    source, target = Path(source), Path(target)
    target.mkdir(parents=True, exist_ok=True)
    for name in names:
        src, dst = source / name, target / name
        if dst.is_dir() and not dst.is_symlink():
            shutil.rmtree(dst)
        elif dst.exists() or dst.is_symlink():
            dst.unlink()
        if src.is_dir():
            shutil.copytree(src, dst, copy_function=_link_or_copy)
        elif src.is_file():
            _link_or_copy(str(src), str(dst))
