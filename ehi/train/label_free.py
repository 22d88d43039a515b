"""EHI's tree trained on frozen vectors, label-free, for a bounded number of steps.

For embeddings without training pairs (the benchmarks', or a user's through :func:`ehi.fit_tree`),
L_siamese and L_indexing (which need (query, positive) pairs) have nothing to act on. What remains of EHI's objective without labels is
L_neighbour (:func:`ehi.train.losses.objective.neighbour_loss`): every document shares its tree path with one of its
embedding-space nearest neighbours, an InfoNCE over path-embedding cosines against the other
anchors' neighbours. Steps: ``TreeIndexer.standardize_`` on a sample (the data-dependent init the
pipeline uses), exact k nearest neighbours within a sample of ``sample`` documents
(:func:`ehi.train.neighbours.nearest_documents`), then ``steps`` AdamW steps on ``anchors`` random
anchors each, on one torch thread. Documents are then assigned to leaves by one forward pass (not timed here).
"""

from __future__ import annotations

import contextlib
import time

import numpy as np
import torch

from ehi.model.tree import TreeIndexer, TreeOutput
from ehi.train.losses.objective import neighbour_loss
from ehi.train.neighbours import nearest_documents
from ehi.train.tree_fit import run_tree_steps


@contextlib.contextmanager
def torch_threads(threads: int | None):
    """Run the block with ``threads`` torch intra-op threads (None: leave the setting alone). The
    tree's products are small: one thread is already fast, and torch's pool can cost far more than
    it saves when other processes share the cores (its barriers wait for descheduled threads)."""
    before = torch.get_num_threads()
    if threads:
        torch.set_num_threads(int(threads))
    try:
        yield
    finally:
        torch.set_num_threads(before)


def tree_shape(n_docs: int, height: int = 2) -> tuple[int, int]:
    """(H, B) with B^H about sqrt(N) leaves: the same number of lists as the IVF default."""
    return height, max(2, round(n_docs ** (0.5 / height)))


def train_tree(docs: np.ndarray, height: int, branching: int, steps: int = 300, sample: int = 20_000,
               anchors: int = 512, k: int = 10, lr: float = 1e-2, temperature: float = 0.3,
               per_node: bool = False, seed: int = 0, threads: int | None = 1) -> tuple[TreeIndexer, dict]:
    """A trained tree over ``docs`` (N, d) and facts about its training (seconds, final loss), on
    ``threads`` torch threads (:func:`torch_threads`)."""
    with torch_threads(threads):
        return _train(docs, height, branching, steps, sample, anchors, k, lr, temperature, per_node, seed)


def _train(docs, height, branching, steps, sample, anchors, k, lr, temperature, per_node, seed):
    start = time.perf_counter()
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    rows = rng.choice(len(docs), min(sample, len(docs)), replace=False)
    emb = torch.from_numpy(np.ascontiguousarray(docs[rows], dtype=np.float32))  # (S, d)
    indexer = TreeIndexer(docs.shape[1], height, branching, per_node=per_node).standardize_(emb)
    knn = nearest_documents(emb.numpy(), k)  # (S, k)
    m = min(anchors, len(rows))

    def batch_loss(rng):
        a = rng.choice(len(rows), m, replace=False)
        b = knn[a, rng.integers(0, knn.shape[1], m)]
        tree = indexer(emb[np.concatenate([a, b])])
        first = TreeOutput(tree.probs[:m], tree.frontier[:m], tree.path[:m], tree.leaf[:m])
        second = TreeOutput(tree.probs[m:], tree.frontier[m:], tree.path[m:], tree.leaf[m:])
        return neighbour_loss(first, second, temperature=temperature)

    indexer, loss = run_tree_steps(indexer, batch_loss, steps, lr, rng)
    facts = {"train_seconds": time.perf_counter() - start, "train_steps": steps, "train_sample": len(rows),
             "final_loss": loss, "height": height, "branching": branching, "per_node": per_node}
    return indexer, facts
