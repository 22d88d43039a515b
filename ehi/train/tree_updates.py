"""The joint loop's tree-only updates (``train.indexer_steps``) and corpus negatives for L_indexing.

After every encoder step the tree takes ``indexer_steps`` more AdamW steps of L_indexing alone on
the cached embeddings of the split's (query, positive) pairs: detached, so the encoder is untouched
and a step costs a few tree forwards. The cache is the one the negative miners read (lazily
refreshed with each batch's fresh embeddings), so the tree follows the encoder as it moves; the
documents' leaves in the cache are reassigned after the updates, since hard negatives are mined
from them. Each call draws from ``default_rng([seed, epoch, batch, TREE_STREAM])``, so a run
resumed at an epoch boundary replays the same tree batches; the optimizer travels in the checkpoint.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import torch

from ehi.model.tree import TreeIndexer
from ehi.train.batches import EmbeddingCache, TrainData
from ehi.train.config import TrainConfig
from ehi.train.tree_fit import TreeFitter, corpus_negatives, pair_indexing_loss, with_balance

TREE_STREAM = 7  # a fourth seed word: the tree's batches never share draws with the joint step's


class TreeUpdates:
    def __init__(self, indexer: TreeIndexer, data: TrainData, cfg: TrainConfig, encoder_steps: int):
        self.indexer, self.data, self.cfg = indexer, data, cfg
        self.fitter = TreeFitter(indexer, cfg.indexer_steps_lr, schedule=cfg.indexer_steps_schedule,
                                 total_steps=max(1, cfg.indexer_steps * encoder_steps))

    def after_step(self, cache: EmbeddingCache, epoch: int, batch: int) -> float:
        """Run the updates on the current cache and reassign its leaves; returns the mean loss."""
        cfg, data = self.cfg, self.data
        device = next(self.indexer.parameters()).device
        docs = torch.from_numpy(cache.doc_emb).to(device)
        queries = torch.from_numpy(cache.q_emb).to(device)
        loss = partial(pair_indexing_loss, self.indexer, queries, docs, data.pair_q, data.pair_d,
                       cfg.indexer_steps_batch, cfg.margin_indexing, negatives=cfg.indexing_negatives,
                       relevant=data.relevant, layout=cfg.path_layout)
        if cfg.lambda_balance:
            loss = partial(with_balance, loss, self.indexer, docs, cfg.lambda_balance)
        mean = self.fitter.run(cfg.indexer_steps, loss, np.random.default_rng([cfg.seed, epoch, batch, TREE_STREAM]))
        if cfg.indexer_steps_refresh and (batch + 1) % cfg.indexer_steps_refresh == 0:
            cache.doc_leaf = self.indexer.assign_leaves(cache.doc_emb)
        return mean

    def state(self) -> tuple[dict, int]:
        return self.fitter.opt.state_dict(), self.fitter.done

    def load_state(self, opt_state: dict, done: int) -> None:
        self.fitter.opt.load_state_dict(opt_state)
        self.fitter.done = done


def corpus_negative_rows(data: TrainData, q_rows: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """The joint step's corpus negatives: k unjudged documents per pair, drawn from the whole corpus
    -> (n*k,) document rows."""
    return corpus_negatives(q_rows, len(data.doc_texts), k, data.relevant, rng).ravel()


def corpus_negative_trees(indexer: TreeIndexer, data: TrainData, cache: EmbeddingCache, q_rows: np.ndarray,
                          rows: np.ndarray, device) -> tuple:
    """The corpus negatives ``rows`` through the tree from their cached (detached) embeddings ->
    (TreeOutput of the n*k documents, (n, n*k) validity mask). Every query may use every drawn
    document unless it judged that document relevant."""
    tree = indexer(torch.from_numpy(cache.doc_emb[rows]).to(device))
    mask = np.stack([~np.isin(rows, data.relevant[q]) for q in q_rows])
    return tree, torch.from_numpy(mask).to(device)
