"""Dev evaluation every epoch, and the best epoch kept (``train.dev_eval``, ``select``, ``patience``).

At each epoch end the loop hands over the fresh corpus embedding (and leaves) it computed anyway;
this encodes the dev queries and logs ``dev_*`` figures (:mod:`ehi.train.dev_eval`). With
``select: dev`` the weights of the epoch with the best ``selection_key`` are written to
``out_dir/best/`` the moment that epoch ends, and become the final model; ``patience`` epochs
without a gain stop the run early. With ``select_metric: kmr_auc`` the tree is judged by the area
under its dev curve, and with ``floor: kmeans`` an epoch's kept tree may be the k-means tree of that
epoch's encoder (:mod:`ehi.train.dev_curve`). Nothing here draws from the training run's random
streams, so a resumed run stays bit-identical; the best epoch is recovered from the log rows the
checkpoint carries.
"""

from __future__ import annotations

import math
from pathlib import Path

from ehi.core.io import atomic_dir
from ehi.core.weights import load_weights
from ehi.data.dataset import Dataset
from ehi.model.encoder import Encoder
from ehi.model.tree import TreeIndexer
from ehi.train.batches import EmbeddingCache, TrainData
from ehi.train.config import TrainConfig
from ehi.train.dev_curve import floor_candidates
from ehi.train.dev_eval import dev_metrics


def best_epoch(rows: list[dict], key: str) -> int | None:
    """Epoch of the best ``key`` value in training-log rows (0 = the starting point; the first one
    on ties; None when no row has it): what ``select: dev`` keeps."""
    scored = [(r[key], r["epoch"]) for r in rows if key in r and not math.isnan(r[key])]
    return max(scored, key=lambda s: (s[0], -s[1]))[1] if scored else None


def log_selection_key(columns) -> str:
    """The column a training log was selected on, from the columns it has: the floor's or the
    tree's curve area where logged (they are logged only when selected on), else the tree's nDCG@10
    at the dev budget (EHI), else exact search's (DE)."""
    for key in ("dev_floor_auc", "dev_tree_auc", "dev_tree_ndcg@10"):
        if key in columns:
            return key
    return "dev_ndcg@10"


def kept_tree(rows: list[dict], epoch: int | None) -> str | None:
    """Which tree the kept epoch's index is: "kmeans" (the floor won on dev) or "trained"."""
    row = next((r for r in rows if r["epoch"] == epoch), None)
    if row is None or "dev_tree_ndcg@10" not in row:
        return None
    return "kmeans" if row.get("dev_floor_kmeans") == 1.0 else "trained"


class DevSelection:
    def __init__(self, dataset: Dataset, cfg: TrainConfig, out_dir: Path):
        self.cfg, self.best_dir = cfg, Path(out_dir) / "best"
        self.dev = TrainData.from_dataset(dataset, cfg.dev_split)  # its queries and their judged documents
        self.candidate: TreeIndexer | None = None  # the last evaluation's k-means tree, where it won

    def evaluate(self, encoder: Encoder, indexer: TreeIndexer | None, fresh: EmbeddingCache) -> dict:
        q = encoder.encode(self.dev.query_texts, self.cfg.encode_batch_size)
        out = dev_metrics(q, fresh.doc_emb, self.dev.graded, indexer, fresh.doc_leaf, self.cfg.dev_budget)
        self.candidate = None
        if indexer is not None and self.cfg.dev_curve:
            curve, self.candidate = floor_candidates(indexer, q, fresh.doc_emb, fresh.doc_leaf, self.dev.graded,
                                                     self.cfg.floor, self.cfg.dev_cost or "documents")
            out.update(curve)
        return out

    def best_epoch(self, rows: list[dict]) -> int | None:
        return best_epoch(rows, self.cfg.selection_key)

    def keep_if_best(self, rows: list[dict], encoder: Encoder, indexer: TreeIndexer | None) -> None:
        if self.cfg.select == "dev" and self.best_epoch(rows) == rows[-1]["epoch"]:
            with atomic_dir(self.best_dir) as tmp:
                encoder.save(tmp / "encoder")
                if indexer is not None:  # the epoch's better tree on dev: trained, or the floor's k-means tree
                    (self.candidate or indexer).save(tmp)

    def should_stop(self, rows: list[dict]) -> bool:
        best = self.best_epoch(rows)
        return bool(self.cfg.patience and rows and best is not None and rows[-1]["epoch"] - best >= self.cfg.patience)

    def restore_best(self, encoder: Encoder, indexer: TreeIndexer | None) -> None:
        """Load the best epoch's weights into ``encoder`` (and ``indexer``): the final model."""
        if self.cfg.select != "dev":
            return
        load_weights(encoder.model, *sorted((self.best_dir / "encoder").glob("*.safetensors")))
        if indexer is not None:
            load_weights(indexer, self.best_dir / "indexer.safetensors")
