"""What a training loop reads: a split as row indices, and the cache of embeddings and leaves.

The cache (:class:`EmbeddingCache`: corpus and query embeddings, each document's leaf) is what the
negative miners read. It is refreshed every ``reindex_every`` epochs (re-embed the corpus, one
indexer pass) and, in between, updated lazily with the fresh values of the documents each batch
saw (ehi.train.step).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np
import pandas as pd

from ehi.core.errors import DataError
from ehi.data.dataset import Dataset
from ehi.data.dataset import doc_texts as corpus_texts
from ehi.data.judgements import relevant as relevant_judgements
from ehi.model.encoder import Encoder
from ehi.model.layer_cache import LayerCache, build_layer_cache, encode_all, freeze_bottom
from ehi.model.tree import TreeIndexer
from ehi.train import distributed
from ehi.train.config import TrainConfig


@dataclass
class TrainData:
    """A split as row indices: texts, (query, positive) pairs, each query's relevant documents."""

    doc_texts: list[str]
    query_ids: list[str]
    query_texts: list[str]
    pair_q: np.ndarray  # (P,) row into query_texts
    pair_d: np.ndarray  # (P,) row into doc_texts
    relevant: list[np.ndarray]  # per query row: sorted doc rows judged relevant
    # train.freeze_layers: the frozen layers' outputs of every text (ehi.model.layer_cache), or None
    doc_layers: LayerCache | None = None
    query_layers: LayerCache | None = None
    grades: list[np.ndarray] | None = None  # per query row: the relevance of each of ``relevant``

    @property
    def graded(self) -> list:
        """Each query's judged rows with their grades, ``{row: grade}`` (grade 1 where none were
        read): what the dev metrics score, as the evaluation does."""
        grades = self.grades or [np.ones(len(r), dtype=np.int64) for r in self.relevant]
        return [dict(zip(r.tolist(), g.tolist())) for r, g in zip(self.relevant, grades)]

    def cache_frozen_layers(self, encoder: Encoder, k: int, root: Path, dtype: str, batch_size: int) -> None:
        """Freeze the encoder's bottom ``k`` layers and cache their outputs for every text. A vector
        tower's input is already that cache (precomputed vectors): the whole tower is frozen."""
        if getattr(encoder, "precomputed", False):
            encoder.requires_grad_(False)
            return
        freeze_bottom(encoder, k)
        self.doc_layers = build_layer_cache(encoder, self.doc_texts, k, root / "corpus", dtype, batch_size, True)
        self.query_layers = build_layer_cache(encoder, self.query_texts, k, root / "queries", dtype, batch_size)

    @classmethod
    def from_dataset(cls, dataset: Dataset, split: str = "train") -> "TrainData":
        queries, qrels = dataset.split(split)
        qrels = relevant_judgements(qrels)
        doc_row = pd.Series(np.arange(len(dataset.corpus)), index=dataset.corpus.doc_id.astype(str))
        queries = queries[queries.query_id.astype(str).isin(set(qrels.query_id.astype(str)))]
        q_row = pd.Series(np.arange(len(queries)), index=queries.query_id.astype(str))
        missing = sorted(set(qrels.doc_id.astype(str)) - set(doc_row.index))[:5]
        if missing:
            raise ValueError(f"{split} qrels of {dataset.name!r} name documents not in the corpus, e.g. {missing}")
        pair_q = q_row.loc[qrels.query_id.astype(str)].to_numpy()
        pair_d = doc_row.loc[qrels.doc_id.astype(str)].to_numpy()
        if len(pair_q) == 0:
            raise DataError(f"split {split!r} of {dataset.name!r} has no judged (query, positive) pairs")
        order = np.lexsort((pair_d, pair_q))
        pair_q, pair_d = pair_q[order], pair_d[order]
        grade = qrels.relevance.to_numpy(dtype=np.int64)[order]
        bounds = np.searchsorted(pair_q, np.arange(len(queries) + 1))
        relevant = [pair_d[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
        grades = [grade[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
        return cls(corpus_texts(dataset.corpus), queries.query_id.astype(str).tolist(),
                   queries.text.astype(str).tolist(), pair_q.astype(np.int64), pair_d.astype(np.int64), relevant,
                   grades=grades)


@dataclass
class EmbeddingCache:
    """The split's embeddings as the encoder last saw them, and each document's leaf: what the
    negative miners, the tree-only updates, L_neighbour and dev evaluation read."""

    doc_emb: np.ndarray  # (N, d) corpus embeddings
    q_emb: np.ndarray  # (Q, d) the split's query embeddings
    doc_leaf: np.ndarray | None = None  # (N,) each document's leaf; None without a tree
    doc_knn: np.ndarray | None = None  # (N, k) nearest documents, built on first use (ehi.train.neighbours)

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays that are set, by field name: what a checkpoint's cache.safetensors holds."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> "EmbeddingCache":
        unknown = sorted(set(arrays) - {f.name for f in fields(cls)})
        if unknown or not {"doc_emb", "q_emb"} <= set(arrays):
            raise ValueError("an embedding cache holds doc_emb, q_emb and optionally doc_leaf, doc_knn; "
                             f"got {sorted(arrays)}")
        return cls(**arrays)


def refresh_cache(data: TrainData, encoder: Encoder, indexer: TreeIndexer | None, cfg: TrainConfig) -> EmbeddingCache:
    """Re-embed corpus and queries and reassign leaves: what the negative miners read."""
    ctx = distributed.context()
    if ctx.active:
        return _refresh_cache_sharded(data, encoder, indexer, cfg, ctx)
    doc_emb = encode_all(encoder, data.doc_texts, data.doc_layers, cfg.encode_batch_size)  # (N, d)
    q_emb = encode_all(encoder, data.query_texts, data.query_layers, cfg.encode_batch_size)  # (Q, d)
    return EmbeddingCache(doc_emb, q_emb, indexer.assign_leaves(doc_emb) if indexer is not None else None)


def _refresh_cache_sharded(data, encoder, indexer, cfg, ctx) -> EmbeddingCache:
    """refresh_cache over W ranks: each encodes (and routes) its contiguous shard; all gather."""
    device = encoder.device
    gathered = {}
    for key, texts in (("doc_emb", data.doc_texts), ("q_emb", data.query_texts)):
        a, b = distributed.shard_bounds(len(texts), ctx)
        local = encoder.encode(texts[a:b], cfg.encode_batch_size)  # (n_r, d)
        if key == "doc_emb" and indexer is not None:
            leaf = indexer.assign_leaves(local) if len(local) else np.empty(0, np.int64)
            gathered["doc_leaf"] = distributed.gather_array(leaf, len(texts), ctx, device)
        gathered[key] = distributed.gather_array(local, len(texts), ctx, device)
    return EmbeddingCache(**gathered)
