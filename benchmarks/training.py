"""Families 3 and 4: EHI's training overhead over the DE baseline, re-indexing, hardware efficiency.

Step overhead: the same MiniLM encoder and the same batches (pair indices, seeds) through
:func:`ehi.train.loop.train_step` + backward + AdamW step, once with the tree (EHI) and once without
(DE), alternating EHI and DE step by step so that the shared machine's load hits both alike; the
median seconds per step of each. Two settings: ``in-batch`` (no mined negatives, so both see the
very same documents: the difference is the tree and its losses) and ``hard`` (each mines its own
hard negatives, as in training: EHI from the positive's leaf, DE from its exact top-k).

Re-indexing: one pass = embed the corpus + one tree forward pass over it, timed apart.

Hardware efficiency: FLOPs of one encoder training step (forward + backward) counted by
``torch.utils.flop_counter.FlopCounterMode``, divided by the step's seconds, over the machine's
float32 matmul peak measured in the same run (a large ``torch.matmul``, median of repeats, same
threads). The step is split into tokenisation, forward, backward and optimizer time to show where
the rest goes.
"""

from __future__ import annotations

import logging
import os
import time

import numpy as np
import pandas as pd
import torch

log = logging.getLogger(__name__)


def matmul_peak(threads: int, size: int = 2048, repeats: int = 5) -> float:
    """float32 FLOP/s of an (size x size) @ (size x size) matmul, median of ``repeats``."""
    torch.set_num_threads(threads)
    a, b = torch.randn(size, size), torch.randn(size, size)
    torch.matmul(a, b)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        torch.matmul(a, b)
        times.append(time.perf_counter() - t)
    return 2 * size**3 / float(np.median(times))


def _setup(n_docs: int, n_queries: int, max_length: int, batch_size: int, encoder_name: str):
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from ehi.data.synthetic import SyntheticConfig, generate
    from ehi.model.encoder import load_encoder
    from ehi.train.batches import TrainData

    dataset = generate(SyntheticConfig(n_docs=n_docs, n_queries=n_queries))
    data = TrainData.from_dataset(dataset, "train")
    encoder = load_encoder(encoder_name, max_length=max_length, device="cpu")
    return data, encoder


def _step_runner(data, encoder, hard: bool, use_tree: bool, batch_size: int, max_length: int):
    """A closure running one full training step on batch ``b``; returns (seconds, loss terms)."""
    import copy

    from ehi.model.tree import TreeIndexer
    from ehi.train.batches import refresh_cache
    from ehi.train.config import TrainConfig
    from ehi.train.loop import make_optimizer
    from ehi.train.step import train_step

    cfg = TrainConfig(batch_size=batch_size, max_length=max_length, use_tree=use_tree, hard_negatives=hard,
                      n_hard_negatives=2, diagnostics=False, device="cpu", lambda_neighbour=0.0)
    enc = copy.deepcopy(encoder)  # each model its own weights and optimizer state
    indexer = TreeIndexer(enc.dim, cfg.height, cfg.branching) if use_tree else None
    cache = refresh_cache(data, enc, indexer, cfg) if hard else None  # in-batch negatives read no cache
    if indexer is not None and hard:
        indexer.standardize_(cache.doc_emb)
        cache.doc_leaf = indexer.assign_leaves(cache.doc_emb)
    opt, _ = make_optimizer(enc, indexer, cfg, total_steps=1000)
    device = torch.device("cpu")
    order = np.random.default_rng(0).permutation(len(data.pair_q))

    def step(b: int) -> float:
        enc.train()
        rng = np.random.default_rng([0, b])  # the same seeds for EHI and DE
        batch = order[(b * batch_size) % len(order):][:batch_size]
        start = time.perf_counter()
        terms, _ = train_step(batch, data, cache, rng, enc, indexer, cfg, device)
        opt.zero_grad(set_to_none=True)
        terms["loss"].backward()
        opt.step()
        return time.perf_counter() - start

    return step, enc, indexer, cache


def step_overhead(data, encoder, steps: int, batch_size: int, max_length: int) -> pd.DataFrame:
    rows = []
    for hard in (False, True):
        ehi_step = _step_runner(data, encoder, hard, True, batch_size, max_length)[0]
        de_step = _step_runner(data, encoder, hard, False, batch_size, max_length)[0]
        ehi_step(0), de_step(0)  # warm-up (allocator, kernels)
        times = {"ehi": [], "de": []}
        for b in range(1, steps + 1):
            first, second = (("ehi", ehi_step), ("de", de_step)) if b % 2 else (("de", de_step), ("ehi", ehi_step))
            for name, fn in (first, second):
                times[name].append(fn(b))
        setting = "hard" if hard else "in-batch"
        for name, ts in times.items():
            rows.append({"setting": setting, "model": name, "seconds_per_step": float(np.median(ts)),
                         "steps": steps, "batch_size": batch_size})
        log.info("step overhead %s: %s", setting, {k: np.median(v) for k, v in times.items()})
    out = pd.DataFrame(rows)
    de = out[out.model == "de"].set_index("setting").seconds_per_step
    out["ehi_over_de"] = np.where(out.model == "ehi", out.seconds_per_step / out.setting.map(de), np.nan)
    return out


def reindex(data, encoder, repeats: int = 1) -> pd.DataFrame:
    """Seconds of one re-indexing pass: corpus embedding, then the tree's forward pass."""
    from ehi.model.tree import TreeIndexer

    embed, assign = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        emb = encoder.encode(data.doc_texts, batch_size=64)
        embed.append(time.perf_counter() - start)
        tree = TreeIndexer(encoder.dim, 2, 8).standardize_(emb)
        start = time.perf_counter()
        tree.assign_leaves(emb)
        assign.append(time.perf_counter() - start)
    e, a = float(np.median(embed)), float(np.median(assign))
    return pd.DataFrame([{"n_docs": len(data.doc_texts), "embed_seconds": e, "assign_seconds": a,
                          "assign_share": a / (e + a), "repeats": repeats}])


def efficiency(data, encoder, threads: int, steps: int, batch_size: int) -> pd.DataFrame:
    """FLOP/s of the encoder's training step (DE: query + document forward, backward, AdamW) against
    the matmul peak, with the step's time split by phase."""
    from torch.utils.flop_counter import FlopCounterMode

    torch.set_num_threads(threads)
    peak = matmul_peak(threads)
    opt = torch.optim.AdamW(encoder.parameters(), lr=1e-5)
    encoder.train()
    rng = np.random.default_rng(0)
    phases = {k: [] for k in ("tokenize", "forward", "backward", "optimizer", "step")}
    flops = None
    for s in range(steps + 1):
        idx = rng.choice(len(data.pair_q), batch_size, replace=False)
        texts = [data.query_texts[i] for i in data.pair_q[idx]] + [data.doc_texts[i] for i in data.pair_d[idx]]
        t0 = time.perf_counter()
        batch = encoder.tokenize(texts)
        t1 = time.perf_counter()
        counter = FlopCounterMode(display=False) if s == 0 else None
        with counter if counter is not None else torch.enable_grad():
            hidden = encoder.model(**batch).last_hidden_state  # (2n, tokens, d)
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            emb = torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=-1)
            q, d = emb[:batch_size], emb[batch_size:]
            loss = torch.nn.functional.cross_entropy(q @ d.T / 0.05, torch.arange(batch_size))
            t2 = time.perf_counter()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            t3 = time.perf_counter()
        opt.step()
        t4 = time.perf_counter()
        if counter is not None:
            flops = counter.get_total_flops()
            tokens = int(batch["attention_mask"].sum())
            padded = int(batch["attention_mask"].numel())
            continue  # the counted step runs slower (the counter intercepts every op): untimed
        for k, v in zip(phases, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t0)):
            phases[k].append(v)
    med = {k: float(np.median(v)) for k, v in phases.items()}
    compute = med["forward"] + med["backward"]
    return pd.DataFrame([{
        "threads": threads, "batch_size": batch_size, "steps": steps, "flops_per_step": flops,
        "tokens": tokens, "padded_tokens": padded, "matmul_peak_flops": peak,
        **{f"{k}_seconds": v for k, v in med.items()},
        "achieved_flops": flops / med["step"], "efficiency": flops / med["step"] / peak,
        "fwd_bwd_efficiency": flops / compute / peak,
    }])


def run(threads: int = 2, steps: int = 6, batch_size: int = 32, max_length: int = 128, n_docs: int = 1000,
        n_queries: int = 400, encoder_name: str = "minilm") -> dict[str, pd.DataFrame]:
    torch.set_num_threads(threads)
    data, encoder = _setup(n_docs, n_queries, max_length, batch_size, encoder_name)
    return {"steps": step_overhead(data, encoder, steps, batch_size, max_length),
            "reindex": reindex(data, encoder),
            "efficiency": efficiency(data, encoder, threads, steps, batch_size)}
