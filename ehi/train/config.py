"""Every hyper-parameter of a training run: one dataclass, checked on construction.

Each field says which model reads it (its ``reads`` metadata, :func:`tree` or :func:`shared`): the
DE baseline trains no tree, so the tree's settings are not DE's (:mod:`ehi.train.model_keys`).
Light to import (no torch): the Snakefile reads the fields while it parses.
"""

from __future__ import annotations

from dataclasses import dataclass

from ehi.core.config import SEED_MAX, Section, bounded
from ehi.model.path_layouts import PATH_LAYOUTS
from ehi.train.losses.names import siamese_loss_names

READS = "reads"  # the field metadata key: "tree" (EHI's tree only) or "shared" (DE and EHI)


def tree(default, **limits):
    """A setting only EHI's tree reads: DE builds no tree, the tree losses are zero without one,
    the dev tree figures and the k-means floor need a tree. ``limits``: its range and choices
    (:func:`ehi.core.config.bounded`)."""
    return bounded(default, metadata={READS: "tree"}, **limits)


def shared(default, **limits):
    """A setting both models read (the encoder, its losses, its batches, its run)."""
    return bounded(default, metadata={READS: "shared"}, **limits)


@dataclass(frozen=True)
class TrainConfig(Section):
    """Every hyper-parameter of a training run; mirrors the ``train`` section of the config. Built
    from a dict (:meth:`~ehi.core.config.Section.from_dict`), an unknown key or a value of the wrong
    type is refused in one line naming the key, as in every section; a value outside its field's
    range or choices, and a broken rule between fields (:meth:`rules`), likewise."""

    section = "train"

    epochs: int = shared(5, minimum=1)
    batch_size: int = shared(64, minimum=2)
    lr_encoder: float = shared(2e-5, minimum=0)
    lr_indexer: float = tree(1e-3, minimum=0)
    weight_decay: float = shared(0.01, minimum=0)
    warmup_ratio: float = shared(0.1, minimum=0, exclusive_maximum=1)
    grad_clip: float = shared(1.0, minimum=0)  # 0: no clipping
    height: int = tree(2, minimum=1, maximum=6)
    branching: int = tree(8, minimum=2, maximum=65536)
    indexer_hidden: int | None = tree(None, minimum=1)  # width of U_h x; None = encoder dim
    # "data": TreeIndexer.standardize_ on the first corpus embedding (random directions, the paper's
    # recipe); "kmeans": a stabiliser beyond the paper, spherical (hierarchical) k-means folded into
    # the tree (ehi.model.tree_init), so the tree starts as an IVF partition; "ivf": the partition
    # FAISS-IVF itself trains (its centroids and seed; the floor's tree at epoch 0); "random": PyTorch's init
    indexer_init: str = tree("data", choices=("data", "kmeans", "ivf", "random"))
    # Where EHI's encoder starts: "pretrained" (the configured encoder) or "de" (the main setting's
    # trained DE of the same seed, as the paper starts EHI from an encoder fine-tuned on the task).
    # The workflow passes that encoder in (workflow/rules/settings.smk: start_encoder); the loop never reads it.
    encoder_init: str = tree("pretrained", choices=("pretrained", "de"))
    path_layout: str = tree("node", choices=PATH_LAYOUTS)
    # Option beyond the paper: each tree node gets its own child classifier (TreeIndexer.per_node).
    # In the paper's form a parent only adds a bias at the next level, so all B^h parents split
    # their regions along the same B directions; on the synthetic default (H=2, B=8, frozen MiniLM)
    # that caps dev routing well below k-means/IVF. False = the paper's indexer.
    indexer_per_node: bool = tree(False)
    # Option beyond the paper: L_neighbour (ehi.train.losses.objective.neighbour_loss), a label-free term asking
    # each document to share its path with its embedding-space nearest neighbours. L_indexing alone
    # shapes only the training pairs' routing and the tree memorises them (train queries reach
    # their positive, held-out ones mostly do not). Each step draws ``neighbour_anchors`` corpus
    # documents, pairs each with one of its ``neighbour_k`` nearest documents (cosine over the
    # cached corpus embeddings, recomputed at every re-index) and adds lambda_neighbour times an
    # InfoNCE (at ``neighbour_temperature``) over their path cosines. It runs the indexer on the
    # cached, detached embeddings, so it trains the indexer only (no extra encoder passes).
    # 0 = off (the paper's objective).
    lambda_neighbour: float = tree(0.0, minimum=0)
    neighbour_k: int = tree(10, minimum=1)
    neighbour_anchors: int = tree(256, minimum=2)
    neighbour_temperature: float = tree(0.3, exclusive_minimum=0)
    lambda_siamese: float = shared(1.0, minimum=0)
    lambda_indexing: float = tree(1.0, minimum=0)
    lambda_intra_leaf: float = tree(0.5, minimum=0)
    margin: float = shared(0.1, minimum=0)  # L_siamese (triplet) and L_intra-leaf, on cosine
    margin_indexing: float = tree(0.1, minimum=0)  # L_indexing, on path-embedding cosine
    temperature: float = shared(0.05, exclusive_minimum=0)  # InfoNCE
    siamese_loss: str = shared("triplet", registry=siamese_loss_names)
    n_hard_negatives: int = shared(2, minimum=0)
    hard_negatives: bool = shared(True)  # False: in-batch negatives only
    hard_negative_pool: int = shared(20, minimum=1)  # DE: sample hard negatives from this exact top-k
    in_batch_negatives: bool = shared(True)
    reindex_every: int = shared(1, minimum=1)
    # Pairs per epoch: 0 = every (query, positive) pair; N = the first N of the epoch's seeded
    # permutation, a different subset every epoch (the warm-up and decay count these steps).
    pairs_per_epoch: int = shared(0, minimum=0)
    max_length: int = shared(128, minimum=1)
    seed: int = shared(0, minimum=0, maximum=SEED_MAX)
    use_tree: bool = shared(True)  # False = DE baseline (lambda_indexing = lambda_intra_leaf = 0)
    diagnostics: bool = tree(True)
    diagnostic_beam: int | None = tree(None, minimum=1)  # None: the beam visiting ~10% of leaves
    # The step log (ehi.train.step_log): every this many encoder steps, and at the first, one row of
    # leaf occupancy, loss terms and each term's gradient norm to the tower and to the router, in
    # step_log.parquet of the run. 0 = off (nothing written, no extra backward).
    diag_every: int = tree(0, minimum=0)
    encode_batch_size: int = shared(64, minimum=1)
    device: str = shared("auto")
    # Tree-only updates (ehi.train.tree_updates): after each encoder step, ``indexer_steps`` AdamW
    # steps of the tree alone on the cached, detached embeddings of the split's (query, positive)
    # pairs, at their own learning rate and schedule. The joint step is unchanged (L_indexing still
    # reaches the encoder); these decouple the tree's optimisation from the encoder's step count.
    # 0 = off (the paper's recipe, and today's weights bit for bit).
    indexer_steps: int = tree(0, minimum=0)
    indexer_steps_lr: float = tree(1e-3, exclusive_minimum=0)
    indexer_steps_batch: int = tree(64, minimum=1)
    indexer_steps_schedule: str = tree("constant", choices=("constant", "linear"))  # linear: to zero at the last encoder step
    # After the tree-only updates of every this many encoder steps, every document's leaf in the
    # cache is reassigned (the hard-negative miners read them); 0: only at each epoch's end. A pass
    # is N x B tree scores, which at 10^6 documents costs a minute a step on one core.
    indexer_steps_refresh: int = tree(1, minimum=0)
    # Corpus-wide negatives for L_indexing: this many unjudged documents drawn from the whole corpus
    # per pair (their cached embeddings, through the tree), in the joint step and the tree updates.
    indexing_negatives: int = tree(0, minimum=0)
    # Load balance in the tree updates (ehi.train.tree_fit.balance_loss): this weight times how
    # unevenly 512 random corpus documents per update spread over the leaves. 0 = off.
    lambda_balance: float = tree(0.0, minimum=0)
    # Dev evaluation at every epoch end (ehi.train.dev_eval): exact search and, with a tree, the tree
    # at the largest beam scoring at most ``dev_budget``; ``select: dev`` keeps the best dev epoch's
    # weights (``select_metric``; "auto" = the tree's nDCG@10 for EHI, exact nDCG@10 for DE;
    # "kmr_auc" = the area under the tree's dev curve over 1-10% scored, ehi.train.dev_curve, the
    # exact nDCG@10 for DE) and stops after ``patience`` epochs without gain (0 = never stop early).
    # ``floor: kmeans`` (needs kmr_auc) makes the k-means tree of the current encoder a candidate
    # every epoch beside the trained tree; the better on dev is kept (ehi.train.dev_curve).
    dev_eval: bool = shared(False)
    dev_split: str = shared("dev")
    dev_budget: float = tree(0.1, exclusive_minimum=0, maximum=1)
    # What a dev budget counts: documents scored, or work (documents plus routing); None = documents,
    # and the workflow passes search.budget_cost work here, so the epoch kept reads the tables' cost.
    dev_cost: str | None = tree(None, choices=("documents", "work"))
    select: str = shared("last", choices=("last", "dev"))
    select_metric: str = shared("auto", choices=("auto", "kmr_auc", "dev_ndcg@10", "dev_recall@100", "dev_tree_ndcg@10",
                                                  "dev_tree_recall@100"))
    floor: str = tree("none", choices=("none", "kmeans"))
    patience: int = shared(0, minimum=0)
    # Freeze the bottom ``freeze_layers`` transformer layers (and the embeddings) and cache their
    # outputs for every text once per run (ehi.model.layer_cache), so steps and re-embeddings run the
    # top layers only. 0 = full fine-tuning.
    freeze_layers: int = shared(0, minimum=0)
    layer_cache_dtype: str = shared("float16", choices=("float16", "float32"))
    # GradCache (ehi.train.grad_cache): encode a step's texts in micro-batches of this many, each
    # recomputed in the backward, so activation memory is one micro-batch's while the loss (and its
    # in-batch negatives) stays the whole batch's. 0 = off.
    grad_cache_chunk: int = shared(0, minimum=0)

    def rules(self) -> dict[str, bool]:
        return {"select: dev needs dev_eval": self.select != "dev" or self.dev_eval,
                "floor: kmeans needs select_metric: kmr_auc": self.floor == "none" or self.select_metric == "kmr_auc"}

    @property
    def n_negatives(self) -> int:
        return self.n_hard_negatives if self.hard_negatives else 0

    @property
    def selection_key(self) -> str:
        """The training-log column ``select: dev`` maximises."""
        if self.select_metric == "kmr_auc" and self.use_tree:
            return "dev_floor_auc" if self.floor == "kmeans" else "dev_tree_auc"
        if self.select_metric not in ("auto", "kmr_auc"):
            return self.select_metric
        return "dev_tree_ndcg@10" if self.use_tree else "dev_ndcg@10"

    @property
    def dev_curve(self) -> bool:
        """Whether each dev evaluation reads the tree's whole curve (ehi.train.dev_curve)."""
        return self.use_tree and self.select_metric == "kmr_auc"

    def loss_kwargs(self) -> dict:
        with_tree = self.use_tree
        return dict(lambda_siamese=self.lambda_siamese, lambda_indexing=self.lambda_indexing if with_tree else 0.0,
                    lambda_intra_leaf=self.lambda_intra_leaf if with_tree else 0.0, siamese_loss=self.siamese_loss,
                    margin=self.margin, margin_indexing=self.margin_indexing, temperature=self.temperature,
                    path_layout=self.path_layout)
