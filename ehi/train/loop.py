"""One training loop for EHI (encoder + tree, jointly) and for the dual-encoder (DE) baseline.

An epoch walks the split's (query, positive) pairs in a seeded random order. Each batch adds
``n_hard_negatives`` mined negatives per pair (EHI: unjudged documents in the positive's leaf; DE:
from its own exact top-k) and uses every other document of the batch as an in-batch negative. The
document embeddings and leaves the miners read are cached: refreshed every ``reindex_every`` epochs
(re-embed the corpus, one indexer pass) and, in between, updated lazily with the fresh values of
the documents each batch saw. A checkpoint (layout below) is written after every epoch.

Determinism: the epoch order comes from ``default_rng([seed, epoch])`` and each batch's sampling
from ``default_rng([seed, epoch, batch])``, so a run resumed at an epoch boundary replays the very
same batches; torch's RNG (dropout) travels in the checkpoint.

Several processes (``torchrun``, :mod:`ehi.train.distributed`): each rank encodes its share of every
global batch and of every corpus re-embedding; the shares are gathered so that every rank computes
the single-process loss and cache. Without torchrun (or with one process) none of that runs.
"""

from __future__ import annotations

import logging
import math
import os
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm

from ehi.core.io import atomic_dir, write_json
from ehi.data.dataset import Dataset
from ehi.model.encoder import Encoder, pick_device
from ehi.model.tree import TreeIndexer, check_leaves_fit
from ehi.core.ivf import ivf_centroids
from ehi.model.tree_init import kmeans_init_
from ehi.model.tree_stats import tree_diagnostics
from ehi.train import distributed
from ehi.train import progress as progress_lines
from ehi.train import step_log
from ehi.train.batches import EmbeddingCache, TrainData, refresh_cache
from ehi.train.checkpoint import load_checkpoint, save_checkpoint, write_log
from ehi.train.config import TrainConfig
from ehi.train.dev_curve import IVF_SEED
from ehi.train.selection import DevSelection, kept_tree
from ehi.train.step import check_finite, train_step
from ehi.train.tree_updates import TreeUpdates

log = logging.getLogger(__name__)


def make_optimizer(encoder, indexer, cfg: TrainConfig, total_steps: int):
    """AdamW with one learning rate for the encoder and one for the indexer; linear warm-up to the
    peak, then linear decay to zero at the last step."""
    groups = [{"params": list(encoder.parameters()), "lr": cfg.lr_encoder}]
    if indexer is not None:
        groups.append({"params": list(indexer.parameters()), "lr": cfg.lr_indexer})
    opt = torch.optim.AdamW(groups, weight_decay=cfg.weight_decay)
    warmup = math.ceil(cfg.warmup_ratio * total_steps)

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return max(0.0, (total_steps - step) / max(1, total_steps - warmup))

    return opt, torch.optim.lr_scheduler.LambdaLR(opt, factor)


def epoch_size(cfg: TrainConfig, n_pairs: int) -> int:
    """Pairs an epoch walks: all of them, or ``pairs_per_epoch`` of them (for collections whose
    judgements are too many for a CPU epoch; each epoch its own seeded draw, so all are seen)."""
    return min(n_pairs, cfg.pairs_per_epoch) if cfg.pairs_per_epoch else n_pairs


@dataclass
class Trainer:
    """What stays fixed through a run: the split, the models, their optimizer, the settings."""

    data: TrainData
    encoder: Encoder
    indexer: TreeIndexer | None  # None: the DE baseline
    opt: torch.optim.Optimizer
    sched: torch.optim.lr_scheduler.LRScheduler
    cfg: TrainConfig
    device: torch.device
    towers: object | None = None  # encoder and tree as one forward (ehi.train.distributed.Towers; DDP-wrapped under several processes)
    updates: TreeUpdates | None = None  # train.indexer_steps: the tree-only updates
    show_progress: bool = False  # the batch progress bar (rank 0 only)


@dataclass
class TrainState:
    """What the epochs change and a checkpoint restores."""

    epoch: int = 0
    step: int = 0
    cache: EmbeddingCache | None = None  # what the miners read (batches.refresh_cache); None: nothing reads it
    rows: list[dict] = field(default_factory=list)  # the epoch log
    step_rows: list[dict] = field(default_factory=list)  # the step log (train.diag_every)


def train(dataset: Dataset, encoder: Encoder, cfg: TrainConfig, out_dir: str | os.PathLike,
          split: str = "train", resume: bool = True, stop_after_epoch: int | None = None,
          progress: bool = True) -> dict:
    """Train ``encoder`` (and, with ``cfg.use_tree``, a fresh tree) on ``split``; write
    ``out_dir/{train_log.parquet, checkpoint/, encoder/, indexer.safetensors, indexer.json}``.

    ``stop_after_epoch`` ends this call after that many epochs without changing the schedule (for
    time-sliced jobs; a later call with ``resume=True`` continues). Returns a summary dict.

    Under ``torchrun`` with several processes every rank calls this with the same arguments; they
    share the work of each step and of each re-embedding, and rank 0 alone writes (ehi.train.distributed).
    """
    ctx = distributed.init_from_env(cfg.device)
    out = Path(out_dir)
    t = _trainer(dataset, encoder, cfg, split, out, ctx, progress)
    selection = DevSelection(dataset, cfg, out) if cfg.dev_eval else None
    state, fresh = _start(t, out, resume)
    if fresh and selection is not None:
        # epoch 0 on dev: the starting point competes too (for a k-means start, that is plain IVF)
        state.cache = state.cache if state.cache is not None else refresh_cache(t.data, encoder, t.indexer, cfg)
        state.rows.append({"epoch": 0, "step": 0, **selection.evaluate(encoder, t.indexer, state.cache)})
        if ctx.is_main:
            selection.keep_if_best(state.rows, encoder, t.indexer)
    tree_used = cfg.use_tree and (cfg.lambda_indexing > 0 or cfg.lambda_neighbour > 0)
    t.towers = (distributed.wrap(encoder, t.indexer, t.device, tree_used, cfg.grad_cache_chunk) if ctx.active
                else distributed.Towers(encoder, t.indexer, cfg.grad_cache_chunk))
    stop = cfg.epochs if stop_after_epoch is None else min(cfg.epochs, stop_after_epoch)
    name = "ehi" if cfg.use_tree else "de"
    if ctx.is_main:
        progress_lines.started(name, len(t.data.pair_q), _n_batches(t), cfg.epochs, out, state.epoch)
    while state.epoch < stop and not (selection and selection.should_stop(state.rows)):
        keep_cache = _epoch(t, state, selection, ctx)
        if ctx.is_main:
            progress_lines.epoch_done(name, state.rows[-1], cfg.epochs)
            if selection is not None:
                selection.keep_if_best(state.rows, encoder, t.indexer)
            write_log(state.rows, out / "train_log.parquet", cfg)
            if state.step_rows:
                write_log(state.step_rows, out / step_log.STEP_LOG, cfg, kind="step_log")
            save_checkpoint(out / "checkpoint", encoder, t.indexer, t.opt, t.sched, cfg, state.epoch, state.step,
                            state.rows, state.cache if keep_cache else None, t.updates, state.step_rows)
        ctx.barrier()
    return _finish(t, state, selection, out, name, ctx)


def _n_batches(t: Trainer) -> int:
    return math.ceil(epoch_size(t.cfg, len(t.data.pair_q)) / t.cfg.batch_size)


def _trainer(dataset: Dataset, encoder: Encoder, cfg: TrainConfig, split: str, out: Path, ctx,
             progress: bool) -> Trainer:
    """Models on their device, the split, the optimizer; the multi-process wrapping decided here once."""
    device = distributed.rank_device(pick_device(cfg.device), ctx)
    encoder.max_length = cfg.max_length
    torch.manual_seed(cfg.seed)
    random.seed(cfg.seed)
    indexer = TreeIndexer(encoder.dim, cfg.height, cfg.branching, cfg.indexer_hidden, cfg.path_layout,
                          per_node=cfg.indexer_per_node) if cfg.use_tree else None
    encoder.to(device)
    indexer = indexer.to(device) if indexer is not None else None
    data = TrainData.from_dataset(dataset, split)
    if cfg.use_tree:
        check_leaves_fit(cfg.branching ** cfg.height, len(data.doc_texts), cfg.height, cfg.branching)
    if cfg.freeze_layers and ctx.active:
        raise ValueError("train.freeze_layers runs in one process only (its layer cache is not sharded)")
    if cfg.diag_every and ctx.active:
        raise ValueError("train.diag_every runs in one process only (a rank holds only its share of a gradient)")
    if cfg.freeze_layers:
        data.cache_frozen_layers(encoder, cfg.freeze_layers, out / "layer_cache", cfg.layer_cache_dtype,
                                 cfg.encode_batch_size)
    n_batches = math.ceil(epoch_size(cfg, len(data.pair_q)) / cfg.batch_size)
    opt, sched = make_optimizer(encoder, indexer, cfg, cfg.epochs * n_batches)
    updates = TreeUpdates(indexer, data, cfg, cfg.epochs * n_batches) if indexer is not None and cfg.indexer_steps \
        else None
    return Trainer(data, encoder, indexer, opt, sched, cfg, device, updates=updates,
                   show_progress=progress and ctx.is_main)


def _needs_cache(cfg: TrainConfig) -> bool:
    """Whether anything reads the embedding cache: the miners, dev evaluation, the tree's extras."""
    return cfg.n_negatives > 0 or cfg.dev_eval or (cfg.use_tree and (cfg.diagnostics or cfg.diag_every > 0
        or cfg.lambda_neighbour > 0 or cfg.indexer_steps > 0 or cfg.indexing_negatives > 0))


def _start(t: Trainer, out: Path, resume: bool) -> tuple[TrainState, bool]:
    """The checkpoint's state, or a fresh one with the tree initialised on the first embedding;
    whether it is fresh."""
    cfg = t.cfg
    saved = load_checkpoint(out / "checkpoint", t.encoder, t.indexer, t.opt, t.sched, cfg, t.updates) if resume else None
    if saved:
        state = TrainState(saved["epoch"], saved["step"], saved["cache"], saved["log"], saved["step_log"])
    else:
        state = TrainState()
        if t.indexer is not None and cfg.indexer_init in ("data", "kmeans", "ivf"):
            state.cache = refresh_cache(t.data, t.encoder, t.indexer, cfg)
            if cfg.indexer_init == "kmeans":
                kmeans_init_(t.indexer, state.cache.doc_emb, cfg.seed)
            elif cfg.indexer_init == "ivf":  # FAISS-IVF's own partition: the floor's tree at epoch 0
                kmeans_init_(t.indexer, state.cache.doc_emb, IVF_SEED, kmeans=ivf_centroids)
            else:
                t.indexer.standardize_(state.cache.doc_emb)
            state.cache.doc_leaf = t.indexer.assign_leaves(state.cache.doc_emb)
    return state, saved is None


def _epoch(t: Trainer, state: TrainState, selection: DevSelection | None, ctx) -> bool:
    """One epoch, its diagnostics and dev figures appended to ``state.rows``; whether the next
    epoch keeps the lazily updated cache (no re-indexing this epoch)."""
    cfg, need_cache = t.cfg, _needs_cache(t.cfg)
    if need_cache and state.cache is None:
        state.cache = refresh_cache(t.data, t.encoder, t.indexer, cfg)
    if ctx.active:  # each rank its own dropout masks, replayable from (seed, epoch, rank)
        torch.manual_seed(distributed.rank_seed(cfg.seed, state.epoch, ctx.rank))
    row = run_epoch(t, state)
    state.epoch, state.step = state.epoch + 1, row["step"]
    # A fresh re-embedding at every epoch end feeds the diagnostics and, on re-indexing epochs,
    # becomes the next epoch's cache; in between, the lazily updated cache carries on.
    fresh = refresh_cache(t.data, t.encoder, t.indexer, cfg) if need_cache else None
    if t.indexer is not None and cfg.diagnostics:
        row.update(tree_diagnostics(t.indexer, fresh.doc_leaf, fresh.q_emb, t.data.pair_q,
                                    t.data.pair_d, cfg.diagnostic_beam))
    if selection is not None:
        row.update(selection.evaluate(t.encoder, t.indexer, fresh))
    keep_cache = state.epoch % cfg.reindex_every != 0  # the next epoch reuses the lazy cache
    state.cache = state.cache if keep_cache else fresh
    state.rows.append(row)
    return keep_cache


def _finish(t: Trainer, state: TrainState, selection: DevSelection | None, out: Path, name: str, ctx) -> dict:
    """Save the final (or the dev-selected) models once the schedule is done; the run's summary."""
    cfg, rows = t.cfg, state.rows
    stopped_early = bool(selection and selection.should_stop(rows))
    if (state.epoch >= cfg.epochs or stopped_early) and ctx.is_main:
        if selection is not None:
            selection.restore_best(t.encoder, t.indexer)
        with atomic_dir(out / "encoder") as tmp:
            t.encoder.save(tmp)
        if t.indexer is not None:
            t.indexer.save(out)
    best = selection.best_epoch(rows) if selection is not None else None
    summary = {"epochs_done": state.epoch, "steps": state.step, "finished": state.epoch >= cfg.epochs or stopped_early,
               "stopped_early": stopped_early, "selected_epoch": best if cfg.select == "dev" else state.epoch,
               "last": rows[-1] if rows else {}, "config": cfg.to_dict()}
    if selection is not None and cfg.dev_curve:  # which tree the kept epoch's index is (train.floor)
        summary["selected_tree"] = kept_tree(rows, best)
    if ctx.is_main:
        write_json(summary, out / "train_summary.json")
        progress_lines.finished(name, summary, out)
    ctx.barrier()
    return summary


def run_epoch(t: Trainer, state: TrainState) -> dict:
    """One pass over the pairs from ``state``'s epoch and step; returns the epoch's log row (mean
    of each loss term, the step reached). Under several processes DDP averages the gradients
    during ``backward``."""
    data, cache, encoder, indexer, opt, sched, cfg = t.data, state.cache, t.encoder, t.indexer, t.opt, t.sched, t.cfg
    epoch, step = state.epoch, state.step
    encoder.train()
    order = np.random.default_rng([cfg.seed, epoch]).permutation(len(data.pair_q))
    order = order[: epoch_size(cfg, len(order))]  # train.pairs_per_epoch: a fresh seeded subset each epoch
    params = [p for group in opt.param_groups for p in group["params"]]
    sums: dict[str, float] = {}
    start, n_batches = time.time(), math.ceil(len(order) / cfg.batch_size)
    bar = tqdm(range(n_batches), desc=f"epoch {epoch + 1}/{cfg.epochs}", disable=not t.show_progress, mininterval=1)
    within = progress_lines.EpochProgress("ehi" if cfg.use_tree else "de", epoch + 1, cfg.epochs, n_batches)
    for b in bar:
        rng = np.random.default_rng([cfg.seed, epoch, b])
        batch = order[b * cfg.batch_size : (b + 1) * cfg.batch_size]
        row = step_log.start_row(epoch, step, cfg, cache, indexer, t.updates is not None)  # train.diag_every
        terms, q_rows = train_step(batch, data, cache, rng, encoder, indexer, cfg, t.device, t.towers)
        check_finite(terms, step, epoch, b, [data.query_ids[i] for i in q_rows])
        if row is not None:
            row.update(step_log.term_gradients(terms, cfg, opt))
        opt.zero_grad(set_to_none=True)
        terms["loss"].backward()
        if row is not None:
            row.update(step_log.loss_gradients(opt))
        if cfg.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(params, cfg.grad_clip)
        opt.step()
        sched.step()
        step += 1
        if t.updates is not None:  # the tree alone, on the cache the step just refreshed
            terms["tree_updates"] = torch.tensor(t.updates.after_step(cache, epoch, b))
        if row is not None:
            state.step_rows.append({**row, **{k: float(terms[k]) for k in ("tree_updates",) if k in terms}})
        for k, v in terms.items():
            sums[k] = sums.get(k, 0.0) + float(v.detach())
        bar.set_postfix({k: f"{v / (b + 1):.4f}" for k, v in sums.items()}, refresh=False)
        if t.show_progress:
            within.step(b + 1, sums)
    lrs = sched.get_last_lr()
    return {"epoch": epoch + 1, "step": step, **{k: v / n_batches for k, v in sums.items()},
            "lr_encoder": lrs[0], "lr_indexer": lrs[1] if len(lrs) > 1 else float("nan"),
            "seconds": time.time() - start}
