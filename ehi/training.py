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

Several processes (``torchrun``, :mod:`ehi.distributed`): each rank encodes its share of every
global batch and of every corpus re-embedding; the shares are gathered so that every rank computes
the single-process loss and cache. Without torchrun (or with one process) none of that runs.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import random
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm

from ehi.data.dataset import Dataset
from ehi.data.dataset import doc_texts as corpus_texts
from ehi import distributed
from ehi.diagnostics import tree_diagnostics
from ehi.encoder import Encoder, pick_device
from ehi.io import atomic_dir
from ehi.index import check_leaves_fit
from ehi.indexer import PATH_LAYOUTS, TreeIndexer
from ehi.io import write_json
from ehi.checkpoint import load_checkpoint, save_checkpoint, write_log
from ehi.losses import SIAMESE_LOSSES, ehi_loss
# L_neighbour (an option beyond the paper) lives in its own module; re-exported for callers
from ehi.neighbours import nearest_documents, neighbour_pair_loss, neighbour_pairs, neighbour_term  # noqa: F401

log = logging.getLogger(__name__)


@dataclass
class TrainConfig:
    """Every hyper-parameter of a training run; mirrors the ``train`` section of the config."""

    epochs: int = 5
    batch_size: int = 64
    lr_encoder: float = 2e-5
    lr_indexer: float = 1e-3
    weight_decay: float = 0.01
    warmup_ratio: float = 0.1
    grad_clip: float = 1.0
    height: int = 2
    branching: int = 8
    indexer_hidden: int | None = None  # width of U_h x; None = encoder dim
    indexer_init: str = "data"  # "data": TreeIndexer.standardize_ on the first corpus embedding
    path_layout: str = "node"
    # Option beyond the paper: each tree node gets its own child classifier (TreeIndexer.per_node).
    # In the paper's form a parent only adds a bias at the next level, so all B^h parents split
    # their regions along the same B directions; on the synthetic default (H=2, B=8, frozen MiniLM)
    # that caps dev routing well below k-means/IVF. False = the paper's indexer.
    indexer_per_node: bool = False
    # Option beyond the paper: L_neighbour (ehi.losses.neighbour_loss), a label-free term asking
    # each document to share its path with its embedding-space nearest neighbours. L_indexing alone
    # shapes only the training pairs' routing and the tree memorises them (train queries reach
    # their positive, held-out ones mostly do not). Each step draws ``neighbour_anchors`` corpus
    # documents, pairs each with one of its ``neighbour_k`` nearest documents (cosine over the
    # cached corpus embeddings, recomputed at every re-index) and adds lambda_neighbour times an
    # InfoNCE (at ``neighbour_temperature``) over their path cosines. It runs the indexer on the
    # cached, detached embeddings, so it trains the indexer only (no extra encoder passes).
    # 0 = off (the paper's objective).
    lambda_neighbour: float = 0.0
    neighbour_k: int = 10
    neighbour_anchors: int = 256
    neighbour_temperature: float = 0.3
    lambda_siamese: float = 1.0
    lambda_indexing: float = 1.0
    lambda_intra_leaf: float = 0.5
    margin: float = 0.1  # L_siamese (triplet) and L_intra-leaf, on cosine
    margin_indexing: float = 0.1  # L_indexing, on path-embedding cosine
    temperature: float = 0.05  # InfoNCE
    siamese_loss: str = "triplet"
    n_hard_negatives: int = 2
    hard_negatives: bool = True  # False: in-batch negatives only
    hard_negative_pool: int = 20  # DE: sample hard negatives from this exact top-k
    in_batch_negatives: bool = True
    reindex_every: int = 1
    max_length: int = 128
    seed: int = 0
    use_tree: bool = True  # False = DE baseline (lambda_indexing = lambda_intra_leaf = 0)
    diagnostics: bool = True
    diagnostic_beam: int | None = None  # None: the beam visiting ~10% of leaves
    encode_batch_size: int = 64
    device: str = "auto"

    def __post_init__(self):
        checks = {
            "epochs >= 1": self.epochs >= 1, "batch_size >= 1": self.batch_size >= 1,
            "height >= 1": self.height >= 1, "branching >= 2": self.branching >= 2,
            f"path_layout in {PATH_LAYOUTS}": self.path_layout in PATH_LAYOUTS,
            f"siamese_loss in {sorted(SIAMESE_LOSSES)}": self.siamese_loss in SIAMESE_LOSSES,
            "reindex_every >= 1": self.reindex_every >= 1, "n_hard_negatives >= 0": self.n_hard_negatives >= 0,
            "0 <= warmup_ratio < 1": 0 <= self.warmup_ratio < 1,
            "indexer_init in ('data', 'random')": self.indexer_init in ("data", "random"),
            "lambda_neighbour >= 0": self.lambda_neighbour >= 0, "neighbour_k >= 1": self.neighbour_k >= 1,
            "neighbour_anchors >= 2": self.neighbour_anchors >= 2,
            "neighbour_temperature > 0": self.neighbour_temperature > 0,
        }
        bad = [rule for rule, ok in checks.items() if not ok]
        if bad:
            raise ValueError(f"invalid TrainConfig: need {', '.join(bad)}")

    @classmethod
    def from_dict(cls, d: dict) -> "TrainConfig":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"unknown TrainConfig key(s) {unknown}; known: {sorted(known)}")
        return cls(**d)

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def n_negatives(self) -> int:
        return self.n_hard_negatives if self.hard_negatives else 0

    def loss_kwargs(self) -> dict:
        tree = self.use_tree
        return dict(lambda_siamese=self.lambda_siamese, lambda_indexing=self.lambda_indexing if tree else 0.0,
                    lambda_intra_leaf=self.lambda_intra_leaf if tree else 0.0, siamese_loss=self.siamese_loss,
                    margin=self.margin, margin_indexing=self.margin_indexing, temperature=self.temperature,
                    path_layout=self.path_layout)


@dataclass
class TrainData:
    """A split as row indices: texts, (query, positive) pairs, each query's relevant documents."""

    doc_texts: list[str]
    query_ids: list[str]
    query_texts: list[str]
    pair_q: np.ndarray  # (P,) row into query_texts
    pair_d: np.ndarray  # (P,) row into doc_texts
    relevant: list[np.ndarray]  # per query row: sorted doc rows judged relevant

    @classmethod
    def from_dataset(cls, dataset: Dataset, split: str = "train") -> "TrainData":
        queries, qrels = dataset.split(split)
        qrels = qrels[qrels.relevance > 0]
        doc_row = pd.Series(np.arange(len(dataset.corpus)), index=dataset.corpus.doc_id.astype(str))
        queries = queries[queries.query_id.astype(str).isin(set(qrels.query_id.astype(str)))]
        q_row = pd.Series(np.arange(len(queries)), index=queries.query_id.astype(str))
        missing = sorted(set(qrels.doc_id.astype(str)) - set(doc_row.index))[:5]
        if missing:
            raise ValueError(f"{split} qrels of {dataset.name!r} name documents not in the corpus, e.g. {missing}")
        pair_q = q_row.loc[qrels.query_id.astype(str)].to_numpy()
        pair_d = doc_row.loc[qrels.doc_id.astype(str)].to_numpy()
        if len(pair_q) == 0:
            raise ValueError(f"split {split!r} of {dataset.name!r} has no judged (query, positive) pairs")
        order = np.lexsort((pair_d, pair_q))
        pair_q, pair_d = pair_q[order], pair_d[order]
        bounds = np.searchsorted(pair_q, np.arange(len(queries) + 1))
        relevant = [pair_d[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
        return cls(corpus_texts(dataset.corpus), queries.query_id.astype(str).tolist(),
                   queries.text.astype(str).tolist(), pair_q.astype(np.int64), pair_d.astype(np.int64), relevant)


def refresh_cache(data: TrainData, encoder: Encoder, indexer: TreeIndexer | None, cfg: TrainConfig) -> dict:
    """Re-embed corpus and queries and reassign leaves: what the negative miners read."""
    ctx = distributed.context()
    if ctx.active:
        return _refresh_cache_sharded(data, encoder, indexer, cfg, ctx)
    doc_emb = encoder.encode(data.doc_texts, cfg.encode_batch_size)  # (N, d)
    cache = {"doc_emb": doc_emb, "q_emb": encoder.encode(data.query_texts, cfg.encode_batch_size)}
    if indexer is not None:
        cache["doc_leaf"] = indexer.assign_leaves(doc_emb)  # (N,)
    return cache


def _refresh_cache_sharded(data, encoder, indexer, cfg, ctx) -> dict:
    """refresh_cache over W ranks: each encodes (and routes) its contiguous shard; all gather."""
    device = encoder.device
    cache = {}
    for key, texts in (("doc_emb", data.doc_texts), ("q_emb", data.query_texts)):
        a, b = distributed.shard_bounds(len(texts), ctx)
        local = encoder.encode(texts[a:b], cfg.encode_batch_size)  # (n_r, d)
        if key == "doc_emb" and indexer is not None:
            leaf = indexer.assign_leaves(local) if len(local) else np.empty(0, np.int64)
            cache["doc_leaf"] = distributed.gather_array(leaf, len(texts), ctx, device)
        cache[key] = distributed.gather_array(local, len(texts), ctx, device)
    return {k: cache[k] for k in ("doc_emb", "q_emb", "doc_leaf") if k in cache}


def mine_negatives(data: TrainData, cache: dict, q_rows, pos_rows, k: int, rng, cfg: TrainConfig) -> np.ndarray:
    """k hard negatives per pair -> (n, k) doc rows. EHI: unjudged documents in the positive's
    leaf; DE: a sample of the query's exact top-``hard_negative_pool``. Pairs whose pool is too
    small are topped up with random unjudged documents so that every batch has the same shape."""
    out = np.empty((len(q_rows), k), dtype=np.int64)
    if k == 0:
        return out
    if cfg.use_tree:
        leaf = cache["doc_leaf"]
        members = np.flatnonzero(np.isin(leaf, np.unique(leaf[pos_rows])))
        members = members[np.argsort(leaf[members], kind="stable")]
        bounds = np.searchsorted(leaf[members], np.stack([leaf[pos_rows], leaf[pos_rows] + 1]))
        pools = [members[a:b] for a, b in bounds.T]
    else:
        scores = cache["q_emb"][q_rows] @ cache["doc_emb"].T  # (n, N)
        for i, q in enumerate(q_rows):
            scores[i, data.relevant[q]] = -np.inf
        top = min(cfg.hard_negative_pool, scores.shape[1])
        pools = list(np.argpartition(-scores, top - 1, axis=1)[:, :top])
    n_docs = len(data.doc_texts)
    for i, (q, pool) in enumerate(zip(q_rows, pools)):
        if len(data.relevant[q]) >= n_docs:
            raise ValueError(f"query {data.query_ids[q]!r} judges every document relevant: no negative exists")
        pool = np.setdiff1d(pool, data.relevant[q])
        picked = rng.choice(pool, min(k, len(pool)), replace=False) if len(pool) else pool
        while len(picked) < k:  # top up; a handful of draws at most unless the corpus is tiny
            extra = rng.integers(0, n_docs, k - len(picked))
            picked = np.concatenate([picked, np.setdiff1d(extra, data.relevant[q])])
        out[i] = picked[:k]
    return out


def relevance_mask(data: TrainData, q_rows, doc_rows) -> np.ndarray:
    """(n, m) True where batch document j is judged relevant to query i."""
    return np.stack([np.isin(doc_rows, data.relevant[q]) for q in q_rows])


def negative_mask(data: TrainData, q_rows, doc_rows, k: int, in_batch: bool,
                  relevant: np.ndarray | None = None) -> torch.Tensor:
    """(n, m) True where batch document j is a valid negative for query i (unjudged for it).
    ``relevant``: the batch's :func:`relevance_mask`, when the caller already has it."""
    n = len(q_rows)
    mask = ~(relevance_mask(data, q_rows, doc_rows) if relevant is None else relevant)
    if not in_batch:  # keep only each query's own hard negatives (columns n + i*k ...)
        own = np.zeros_like(mask)
        for i in range(n):
            own[i, n + i * k : n + (i + 1) * k] = True
        mask &= own
    return torch.from_numpy(mask)


def train_step(batch, data, cache, rng, encoder, indexer, cfg, device, towers=None) -> tuple[dict, np.ndarray]:
    """Forward one batch of pair indices; returns the loss terms and the batch's query rows.
    Lazily refreshes the cache with the batch's fresh embeddings (and leaves). ``towers``: the
    DistributedDataParallel module of a multi-process run (None in one process)."""
    q_rows, pos_rows = data.pair_q[batch], data.pair_d[batch]
    negs = mine_negatives(data, cache, q_rows, pos_rows, cfg.n_negatives, rng, cfg)  # (n, k)
    doc_rows = np.concatenate([pos_rows, negs.ravel()])  # (m,) positives first
    relevant = relevance_mask(data, q_rows, doc_rows)  # (n, m)
    mask = negative_mask(data, q_rows, doc_rows, cfg.n_negatives, cfg.in_batch_negatives, relevant).to(device)
    positives = torch.from_numpy(relevant).to(device)
    amp = torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda" else contextlib.nullcontext()
    neighbour = indexer is not None and cfg.lambda_neighbour > 0
    with amp:
        if towers is None:
            q = encoder([data.query_texts[i] for i in q_rows])  # (n, d)
            d = encoder([data.doc_texts[i] for i in doc_rows])  # (m, d)
            q_tree = indexer(q) if indexer is not None else None
            d_tree = indexer(d) if indexer is not None else None
        else:
            pairs = neighbour_pairs(cache, rng, cfg, device) if neighbour else None
            q, d, q_tree, d_tree, pair_tree = _sharded_forward(towers, data, q_rows, doc_rows, pairs, cfg)
        pos_idx = torch.arange(len(q_rows), device=device)
        terms = ehi_loss(q, d, pos_idx, mask, q_tree, d_tree, positive_mask=positives, **cfg.loss_kwargs())
    if neighbour:
        terms["neighbour"] = (neighbour_term(cache, indexer, rng, cfg, device) if towers is None
                              else neighbour_pair_loss(pair_tree, cfg))
        terms["loss"] = terms["loss"] + cfg.lambda_neighbour * terms["neighbour"]
    if cache:
        cache["q_emb"][q_rows] = q.detach().float().cpu().numpy()
        cache["doc_emb"][doc_rows] = d.detach().float().cpu().numpy()
        if d_tree is not None:
            cache["doc_leaf"][doc_rows] = d_tree.leaf.cpu().numpy()
    return terms, q_rows


def _sharded_forward(towers, data, q_rows, doc_rows, pairs, cfg):
    """The multi-process forward: this rank encodes its contiguous share of the batch's queries and
    documents; the shares are gathered with gradient into the global (n, d) and (m, d) batch, and
    the trees likewise (see ehi.distributed for why that gives the single-process gradient)."""
    ctx = distributed.context()
    (qa, qb), (da, db) = distributed.shard_bounds(len(q_rows), ctx), distributed.shard_bounds(len(doc_rows), ctx)
    # an empty share encodes a stand-in text and keeps none of it (every rank must run DDP's forward)
    q_texts = [data.query_texts[i] for i in q_rows[qa:qb]] or [data.query_texts[q_rows[0]]]
    d_texts = [data.doc_texts[i] for i in doc_rows[da:db]] or [data.doc_texts[doc_rows[0]]]
    tree_grad = cfg.use_tree and cfg.lambda_indexing > 0  # else the trees only give leaves
    q, d, q_tree, d_tree, pair_tree = towers(q_texts, d_texts, qb - qa, db - da, tree_grad, pairs)
    q, d = distributed.gather_rows(q, len(q_rows), ctx), distributed.gather_rows(d, len(doc_rows), ctx)
    if q_tree is not None:
        q_tree = distributed.gather_tree(q_tree, len(q_rows), ctx)
        d_tree = distributed.gather_tree(d_tree, len(doc_rows), ctx)
    return q, d, q_tree, d_tree, pair_tree


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


def _check_finite(terms: dict, step: int, epoch: int, batch: int, query_ids: list[str]) -> None:
    """Stop before a NaN/inf reaches the weights; numbers are 1-based like the training log."""
    values = {k: float(v.detach()) for k, v in terms.items()}
    if not all(math.isfinite(v) for v in values.values()):
        shown = ", ".join(f"{k}={v:.6g}" for k, v in values.items())
        raise RuntimeError(f"non-finite loss at step {step + 1} (epoch {epoch + 1}, batch {batch + 1}): "
                           f"{shown}; batch query ids "
                           f"{query_ids}. Training stopped; the last good checkpoint is kept.")


def train(dataset: Dataset, encoder: Encoder, cfg: TrainConfig, out_dir: str | os.PathLike,
          split: str = "train", resume: bool = True, stop_after_epoch: int | None = None,
          progress: bool = True) -> dict:
    """Train ``encoder`` (and, with ``cfg.use_tree``, a fresh tree) on ``split``; write
    ``out_dir/{train_log.parquet, checkpoint/, encoder/, indexer.safetensors, indexer.json}``.

    ``stop_after_epoch`` ends this call after that many epochs without changing the schedule (for
    time-sliced jobs; a later call with ``resume=True`` continues). Returns a summary dict.

    Under ``torchrun`` with several processes every rank calls this with the same arguments; they
    share the work of each step and of each re-embedding, and rank 0 alone writes (ehi.distributed).
    """
    ctx = distributed.init_from_env(cfg.device)
    out, device = Path(out_dir), distributed.rank_device(pick_device(cfg.device), ctx)
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
    n_batches = math.ceil(len(data.pair_q) / cfg.batch_size)
    opt, sched = make_optimizer(encoder, indexer, cfg, cfg.epochs * n_batches)
    state = load_checkpoint(out / "checkpoint", encoder, indexer, opt, sched, cfg) if resume else None
    epoch, step, cache, rows = (state["epoch"], state["step"], state["cache"], state["log"]) if state \
        else (0, 0, None, [])
    need_cache = cfg.n_negatives > 0 or (cfg.use_tree and (cfg.diagnostics or cfg.lambda_neighbour > 0))
    if state is None and indexer is not None and cfg.indexer_init == "data":
        cache = refresh_cache(data, encoder, indexer, cfg)
        indexer.standardize_(cache["doc_emb"])
        cache["doc_leaf"] = indexer.assign_leaves(cache["doc_emb"])
    stop = cfg.epochs if stop_after_epoch is None else min(cfg.epochs, stop_after_epoch)
    tree_used = cfg.use_tree and (cfg.lambda_indexing > 0 or cfg.lambda_neighbour > 0)
    towers = distributed.wrap(encoder, indexer, device, tree_used) if ctx.active else None
    while epoch < stop:
        if need_cache and cache is None:
            cache = refresh_cache(data, encoder, indexer, cfg)
        if ctx.active:  # each rank its own dropout masks, replayable from (seed, epoch, rank)
            torch.manual_seed(distributed.rank_seed(cfg.seed, epoch, ctx.rank))
        row = run_epoch(epoch, step, data, cache, encoder, indexer, opt, sched, cfg, device,
                        progress and ctx.is_main, towers)
        epoch, step = epoch + 1, row["step"]
        # A fresh re-embedding at every epoch end feeds the diagnostics and, on re-indexing epochs,
        # becomes the next epoch's cache; in between, the lazily updated cache carries on.
        fresh = refresh_cache(data, encoder, indexer, cfg) if need_cache else None
        if indexer is not None and cfg.diagnostics:
            row.update(tree_diagnostics(indexer, fresh["doc_leaf"], fresh["q_emb"], data.pair_q,
                                        data.pair_d, cfg.diagnostic_beam))
        keep_cache = epoch % cfg.reindex_every != 0  # the next epoch reuses the lazy cache
        cache = cache if keep_cache else fresh
        rows.append(row)
        if ctx.is_main:
            write_log(rows, out / "train_log.parquet", cfg)
            save_checkpoint(out / "checkpoint", encoder, indexer, opt, sched, cfg, epoch, step, rows,
                            cache if keep_cache else None)
        ctx.barrier()
    if epoch >= cfg.epochs and ctx.is_main:
        with atomic_dir(out / "encoder") as tmp:
            encoder.save(tmp)
        if indexer is not None:
            indexer.save(out)
    summary = {"epochs_done": epoch, "steps": step, "finished": epoch >= cfg.epochs,
               "last": rows[-1] if rows else {}, "config": cfg.to_dict()}
    if ctx.is_main:
        write_json(summary, out / "train_summary.json")
    ctx.barrier()
    return summary


def run_epoch(epoch, step, data, cache, encoder, indexer, opt, sched, cfg, device, progress, towers=None) -> dict:
    """One pass over the pairs; returns the epoch's log row (mean of each loss term). ``towers``:
    see train_step; DDP averages the gradients during ``backward``."""
    encoder.train()
    order = np.random.default_rng([cfg.seed, epoch]).permutation(len(data.pair_q))
    params = [p for group in opt.param_groups for p in group["params"]]
    sums: dict[str, float] = {}
    start, n_batches = time.time(), math.ceil(len(order) / cfg.batch_size)
    bar = tqdm(range(n_batches), desc=f"epoch {epoch + 1}/{cfg.epochs}", disable=not progress, mininterval=1)
    for b in bar:
        rng = np.random.default_rng([cfg.seed, epoch, b])
        batch = order[b * cfg.batch_size : (b + 1) * cfg.batch_size]
        terms, q_rows = train_step(batch, data, cache, rng, encoder, indexer, cfg, device, towers)
        _check_finite(terms, step, epoch, b, [data.query_ids[i] for i in q_rows])
        opt.zero_grad(set_to_none=True)
        terms["loss"].backward()
        if cfg.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(params, cfg.grad_clip)
        opt.step()
        sched.step()
        step += 1
        for k, v in terms.items():
            sums[k] = sums.get(k, 0.0) + float(v.detach())
        bar.set_postfix({k: f"{v / (b + 1):.4f}" for k, v in sums.items()}, refresh=False)
    lrs = sched.get_last_lr()
    return {"epoch": epoch + 1, "step": step, **{k: v / n_batches for k, v in sums.items()},
            "lr_encoder": lrs[0], "lr_indexer": lrs[1] if len(lrs) > 1 else float("nan"),
            "seconds": time.time() - start}


# ---- checkpoints: safetensors for tensors, JSON for the rest; no pickle anywhere ----------------
