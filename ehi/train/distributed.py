"""Data-parallel training over several processes (``torchrun``) that computes what one process does.

One process (the default, and any run with ``WORLD_SIZE`` unset or 1) never touches this module's
collectives: :mod:`ehi.train.loop` runs exactly as it always did. The multi-process path is active
only when torch.distributed is initialised with more than one rank.

What is shared and what is split, for W ranks and a global batch of G (query, positive) pairs:

* The batch. The epoch order and each batch's sampling RNG are seeded by (seed, epoch, batch),
  never by rank, so every rank draws the same global batch, mines the same hard negatives for all
  G pairs from the same cache, and builds the same negative mask. Rank r then encodes only its
  contiguous share of the batch's queries and of its documents (:func:`shard_bounds`: shares
  differ by at most one row, so a last batch that does not divide by W is fine). This is the
  split torch's DistributedSampler makes, applied to each global batch instead of to the epoch:
  the sampler would draw its own permutation and pad the epoch with repeated pairs, and the union
  of the ranks' batches would no longer be the single-process batch.
* In-batch negatives. The shares are all-gathered *with gradient* (:class:`_AllGather`), so every
  rank computes the one global loss, in which every document of the global batch is a negative for
  every query, as in one process.
* Gradients. The gather's backward is the matching reduce-scatter: it sums, over ranks, the
  gradient each rank's copy of the loss sends to rank r's share. All ranks compute the same loss, so rank r receives W times the gradient
  of its share; DistributedDataParallel then averages over ranks: (1/W) sum_r W g_r = sum_r g_r,
  the single-process gradient. A term that every rank computes in full from replicated inputs
  (L_neighbour on the cached embeddings) is not gathered: each rank already holds its full
  gradient, and the average keeps it.
* The cache the miners read (corpus/query embeddings, leaves). Rank r re-embeds its contiguous
  shard of the corpus and of the queries and assigns its documents' leaves; the shards are
  all-gathered block by block (:func:`gather_array`), so every rank holds the same full cache and
  no GPU ever holds more than one block of it.
* Files. Only rank 0 writes checkpoints, logs and the final model; the others wait at a barrier.

Dropout is the one thing that differs: each rank draws its own masks (seeded by seed, epoch and
rank, so a resumed multi-process run replays too). With dropout 0 a W-process run reproduces the
single-process weights to float tolerance (tests/train/test_distributed.py).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import torch
import torch.distributed as dist
from torch import nn

from ehi.model.tree import TreeOutput
from ehi.train.grad_cache import encode_in_chunks

log = logging.getLogger(__name__)

GATHER_BLOCK_ROWS = 65536  # rows per rank per all_gather when collecting the cache


@dataclass(frozen=True)
class Context:
    """Where this process stands in the job: rank, world size, local rank (its GPU on the node)."""

    rank: int = 0
    world: int = 1
    local_rank: int = 0

    @property
    def active(self) -> bool:
        return self.world > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def barrier(self) -> None:
        if self.active:
            dist.barrier()


def context() -> Context:
    """The current process's context (a single process unless torch.distributed is initialised)."""
    if not (dist.is_available() and dist.is_initialized()):
        return Context()
    return Context(dist.get_rank(), dist.get_world_size(), int(os.environ.get("LOCAL_RANK", 0)))


def init_from_env(device: str | None = "auto") -> Context:
    """Join the process group that ``torchrun`` describes in the environment (WORLD_SIZE, RANK,
    MASTER_ADDR, ...), if it describes more than one process; idempotent. NCCL on CUDA, else gloo."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1 or dist.is_initialized():
        return context()
    cuda = torch.cuda.is_available() and device not in ("cpu",)
    if cuda:
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))
    dist.init_process_group("nccl" if cuda else "gloo")
    ctx = context()
    log.info("rank %d of %d (local rank %d), backend %s", ctx.rank, ctx.world, ctx.local_rank,
             dist.get_backend())
    return ctx


def rank_device(device: torch.device, ctx: Context) -> torch.device:
    """Each rank's own GPU (cuda:LOCAL_RANK); CPU stays CPU."""
    return torch.device("cuda", ctx.local_rank) if device.type == "cuda" and ctx.active else device


def shard_bounds(n: int, ctx: Context) -> tuple[int, int]:
    """[start, stop) of this rank's contiguous share of n rows (np.array_split's split)."""
    base, extra = divmod(n, ctx.world)
    start = ctx.rank * base + min(ctx.rank, extra)
    return start, start + base + (ctx.rank < extra)


def shard_sizes(n: int, world: int) -> list[int]:
    base, extra = divmod(n, world)
    return [base + (r < extra) for r in range(world)]


def rank_seed(seed: int, epoch: int, rank: int) -> int:
    """Seed of a rank's torch RNG (dropout) for one epoch: distinct per rank, replayable on resume."""
    return int(np.random.SeedSequence([seed, epoch, rank, 0xD15]).generate_state(1)[0])


class _AllGather(torch.autograd.Function):
    """all_gather (W, rows, ...) whose backward sums the incoming gradient over ranks and returns
    this rank's slice (a reduce-scatter). torch.distributed.nn's version is deprecated."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        parts = [torch.empty_like(x) for _ in range(dist.get_world_size())]
        dist.all_gather(parts, x.contiguous())
        return torch.stack(parts)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
        grad = grad.contiguous()
        dist.all_reduce(grad)
        return grad[dist.get_rank()]


def _padded(x: torch.Tensor, rows: int) -> torch.Tensor:
    if len(x) == rows:
        return x.contiguous()
    return torch.cat([x, x.new_zeros((rows - len(x), *x.shape[1:]))]).contiguous()


def gather_rows(x: torch.Tensor, n_total: int, ctx: Context) -> torch.Tensor:
    """All ranks' shares (this rank's ``x`` is rows ``shard_bounds(n_total)``) concatenated in rank
    order -> (n_total, ...). Floating tensors keep their gradient (see the module doc for why the
    summed backward is the right one); integer tensors are gathered as plain data."""
    sizes = shard_sizes(n_total, ctx.world)
    local = _padded(x, max(sizes))  # all_gather needs equal shapes: pad the shorter shares
    if x.is_floating_point() and x.requires_grad:
        parts = _AllGather.apply(local)  # (W, max share, ...)
    else:
        parts = [torch.empty_like(local) for _ in range(ctx.world)]
        dist.all_gather(parts, local)
    return torch.cat([p[:s] for p, s in zip(parts, sizes)])


def gather_array(local: np.ndarray, n_total: int, ctx: Context, device: torch.device,
                 block_rows: int = GATHER_BLOCK_ROWS) -> np.ndarray:
    """The numpy version for the cache: every rank's contiguous shard -> the full (n_total, ...)
    array on every rank, moved through ``device`` (NCCL needs GPU tensors) one block at a time."""
    sizes = shard_sizes(n_total, ctx.world)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    out = np.empty((n_total, *local.shape[1:]), dtype=local.dtype)
    for start in range(0, max(sizes), block_rows):
        width = min(block_rows, max(sizes) - start)  # rows each rank sends (padded)
        block = torch.from_numpy(np.ascontiguousarray(local[start : start + width])).to(device)
        block = _padded(block, width)
        parts = [torch.empty_like(block) for _ in range(ctx.world)]
        dist.all_gather(parts, block)
        for r, part in enumerate(parts):
            rows = max(0, min(width, sizes[r] - start))
            out[offsets[r] + start : offsets[r] + start + rows] = part[:rows].cpu().numpy()
    return out


class Towers(nn.Module):
    """Encoder and tree as one module, so that DistributedDataParallel sees one forward per step;
    one process runs it unwrapped (ehi.train.step: one forward path for both).

    ``forward`` returns exactly the outputs the loss will use: the trees carry a graph only when
    ``tree_grad`` (L_indexing on); otherwise they are computed without one, as their leaves feed
    L_intra-leaf and the cache but no gradient. A returned output that the loss ignored would make
    DDP wait for gradients that never come.
    """

    def __init__(self, encoder: nn.Module, indexer: nn.Module | None, grad_cache_chunk: int = 0):
        super().__init__()
        self.encoder = encoder
        self.indexer = indexer
        self.chunk = grad_cache_chunk  # train.grad_cache_chunk: texts per recomputed micro-batch (0: off)

    def forward(self, data, q_rows, doc_rows, n_queries: int, n_docs: int, tree_grad: bool,
                extra_emb: torch.Tensor | None = None):
        """``data``: the split's texts and frozen-layer caches (a TrainData), ``q_rows``/``doc_rows``
        this rank's rows of them."""
        # a rank whose share is empty still runs the encoder (on a stand-in row) so that every rank
        # takes part in DDP's gradient reduction; the [:0] slice keeps the graph and adds no rows
        q = encode_in_chunks(self.encoder, data.query_texts, data.query_layers, q_rows, self.chunk)[:n_queries]  # (n_r, d)
        d = encode_in_chunks(self.encoder, data.doc_texts, data.doc_layers, doc_rows, self.chunk)[:n_docs]  # (m_r, d)
        q_tree = d_tree = extra_tree = None
        if self.indexer is not None:
            with torch.set_grad_enabled(tree_grad and torch.is_grad_enabled()):
                q_tree, d_tree = self.indexer(q), self.indexer(d)
            if extra_emb is not None:  # L_neighbour: outside autocast
                with torch.autocast(extra_emb.device.type, enabled=False):
                    extra_tree = self.indexer(extra_emb)
        return q, d, q_tree, d_tree, extra_tree


def gather_tree(tree: TreeOutput, n_total: int, ctx: Context) -> TreeOutput:
    """:func:`gather_rows` for each field of a tree output."""
    return TreeOutput(*(gather_rows(t, n_total, ctx) for t in (tree.probs, tree.frontier, tree.path, tree.leaf)))


def unreachable_parameters(encoder: nn.Module, indexer: nn.Module | None, tree_used: bool) -> list[str]:
    """Parameters no loss can reach: a Hugging Face model may carry some (BERT's pooler), and the
    tree is one when L_indexing and L_neighbour are off. Found by one tiny forward and backward."""
    towers = Towers(encoder, indexer if tree_used else None)
    probe = SimpleNamespace(query_texts=["probe"], doc_texts=["probe"], query_layers=None, doc_layers=None)
    q, d, q_tree, d_tree, _ = towers(probe, [0], [0], 1, 1, tree_grad=True)
    (q.sum() + d.sum() + (q_tree.frontier.sum() if q_tree is not None else 0)).backward()
    named = [*encoder.named_parameters(), *((f"tree.{k}", p) for k, p in (indexer.named_parameters() if indexer else []))]
    unused = [name for name, p in named if p.requires_grad and p.grad is None]
    for _, p in named:
        p.grad = None
    return unused


def wrap(encoder: nn.Module, indexer: nn.Module | None, device: torch.device, tree_used: bool,
         grad_cache_chunk: int = 0) -> nn.Module:
    """Towers under DistributedDataParallel. Unreachable parameters keep ``grad = None``, as in one
    process, so AdamW skips them alike; DDP's search for them (a graph traversal every step) is
    switched on only when there are some."""
    from torch.nn.parallel import DistributedDataParallel

    unused = unreachable_parameters(encoder, indexer, tree_used)
    if unused:
        log.info("%d parameter tensors get no gradient (e.g. %s): DDP looks for unused parameters",
                 len(unused), unused[0])
    ids = [device.index] if device.type == "cuda" else None
    return DistributedDataParallel(Towers(encoder, indexer, grad_cache_chunk), device_ids=ids,
                                   find_unused_parameters=bool(unused))
