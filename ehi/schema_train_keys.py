"""The descriptions of the ``train`` keys, and the schema words their types cannot say.

Their order is the schema's, and the order in which an ablation row's variant path names its keys
(ehi.core.config_schema.variant_key_order): a key added to ``train`` goes last, or every committed
variant path changes. Types, defaults, ranges and choices are TrainConfig's (and TrainSeeds' for
the seeds only the workflow reads); ``ehi.schema_file`` builds the schema from both.
"""

from __future__ import annotations

from ehi.config import WORKFLOW_SET, TrainSeeds
from ehi.core.schema_build import Doc, Keys
from ehi.train.config import TrainConfig
from ehi.train.losses.names import NAME_PATTERN as LOSS_NAME

TRAIN_DOCS = {
    "epochs": "Passes over the training pairs.",
    "batch_size": Doc(("(query, positive) pairs per step; the other documents of the batch are in-batch "
                       "negatives.")),
    "lr_encoder": "AdamW learning rate of the encoder (0 = no encoder updates).",
    "lr_indexer": ("AdamW learning rate of the tree indexer in the joint step (0 = no tree updates "
                   "there)."),
    "weight_decay": "AdamW weight decay.",
    "warmup_ratio": "Share of the steps with a linear warm-up; linear decay afterwards.",
    "grad_clip": "Gradient-norm clipping threshold (0 = no clipping).",
    "height": "Tree height H.",
    "branching": Doc(("Tree branching factor B (B^H leaves), or auto: with height 1, the leaf count rule "
                      "dev_leaf_count chooses it on the dev split (ehi.train.leaf_count: the k-means tree "
                      "on the pretrained embeddings over IVF's nlist grid, grown while its top wins)."), arms=({"type": "string", "enum": ["auto"]},)),
    "indexer_hidden": "Width of the per-level affine map U_h x (null = encoder dimension).",
    "path_layout": ("Path embedding layout: node (one slot per tree node, zeros off the path) or "
                    "frontier (the authors' B*H layout)."),
    "lambda_siamese": "Weight of L_siamese (query vs documents on encoder embeddings).",
    "lambda_indexing": "Weight of L_indexing (the triplet loss on path embeddings).",
    "lambda_intra_leaf": ("Weight of L_intra-leaf (ranking among documents sharing the positive's "
                          "leaf)."),
    "margin": "Margin of the triplet losses on cosine similarity.",
    "margin_indexing": "Margin of L_indexing on path-embedding cosine.",
    "temperature": "Temperature of InfoNCE.",
    "siamese_loss": Doc(("Form of L_siamese: triplet (the paper's), infonce, the DEXML losses: softmax "
                         "(multi-label softmax, a query's positives share one denominator), "
                         "decoupled_softmax (each positive against negatives only; equals infonce here) "
                         "and soft_topk; or a plugin's (the names are ehi/train/losses/names.py's, checked"
                         " when the Snakefile parses)."), words={"pattern": f"^{LOSS_NAME}$"}),
    "indexer_init": ("Tree initialisation: data (centre and scale U_h x on the first corpus embedding,"
                     " so a fresh tree does not send everything to one leaf; random directions, the "
                     "paper's recipe), kmeans (beyond the paper: spherical k-means of the first corpus"
                     " embedding folded into the tree, hierarchical per level; the tree starts as an "
                     "IVF partition), ivf (beyond the paper: the partition FAISS-IVF itself trains, "
                     "its centroids and seed, as train.floor's candidate; one level) or random "
                     "(PyTorch's default)."),
    "encoder_init": ("Where EHI's encoder starts: pretrained (encoder.name) or de (the main setting's "
                     "trained DE of the same seed, then trained on jointly with the tree, as the paper"
                     " starts EHI from an encoder fine-tuned on the task; with freeze_layers > 0 the "
                     "tree is trained alone on DE's vectors: the two-stage recipe)."),
    "hard_negatives": "Mine hard negatives (false = in-batch negatives only).",
    "n_hard_negatives": "Mined hard negatives per (query, positive) pair.",
    "hard_negative_pool": "DE baseline samples its hard negatives from this exact top-k.",
    "in_batch_negatives": "Use the other documents of the batch as negatives.",
    "reindex_every": "Re-embed the corpus and reassign leaves every r epochs.",
    "pairs_per_epoch": ("Training pairs an epoch walks: 0 = all; N = a fresh seeded draw of N pairs "
                        "each epoch (for collections with more judgements than a CPU epoch can take)."),
    "seed": ("Seed of batching, sampling and initialisation (at most 2^30: it and the seeds derived "
             "from it fit the 32-bit integer FAISS takes, the narrowest seed the pipeline passes on); "
             "one of train.seeds when those are given."),
    "seeds": Doc(("Training seeds as a dimension of the results (ehi.evaluate.seeds): each model of the "
                  "main setting, and of every variant evaluation.variant_systems reports, is trained, "
                  "searched and evaluated once per seed (train.seed's run is the variant itself, each "
                  "other seed S the replica variant seed~S); the KMR table shows mean and spread over "
                  "seeds, the paired tests and claims use per-query values averaged over seeds. null = "
                  "train.seed alone."), words={"minItems": 1, "uniqueItems": True}),
    "lambda_neighbour": ("Beyond the paper: weight of L_neighbour, an InfoNCE over path embeddings "
                         "asking each document to share its path with its embedding-space nearest "
                         "neighbours (trains the indexer only; 0 = off, the paper's method)."),
    "indexer_per_node": ("Beyond the paper: every tree node gets its own child classifier (the paper's"
                         " router shares the split directions of a level across parents)."),
    "neighbour_k": "Nearest neighbours each anchor document draws its partner from (L_neighbour).",
    "neighbour_anchors": "Corpus documents drawn per step as anchors of L_neighbour.",
    "neighbour_temperature": "Temperature of L_neighbour.",
    "diagnostics": "Log leaf balance and routing accuracy each epoch.",
    "diagnostic_beam": "Beam for the routing diagnostic (null = visits about 10% of the leaves).",
    "diag_every": ("The step log of EHI's training (ehi/train/step_log.py): every this many encoder "
                   "steps, and at the first, one row of leaf occupancy (empty leaves, largest over "
                   "mean, entropy), each loss term and the gradient norm each term sends to the tower "
                   "and to the router, in step_log.parquet of the run and "
                   "results/<dataset>/<variant>/train_steps/ehi.parquet. 0 = off (nothing written, and"
                   " the training params of a config without it are unchanged)."),
    "indexer_steps": ("Tree-only updates after every encoder step: AdamW steps of L_indexing alone on "
                      "the cached, detached embeddings of the split's (query, positive) pairs (the "
                      "joint step is unchanged; 0 = off, the paper's recipe)."),
    "indexer_steps_lr": "Learning rate of the tree-only updates.",
    "indexer_steps_batch": "Pairs per tree-only update (in-batch negatives).",
    "indexer_steps_refresh": ("Encoder steps between reassigning every document's leaf in the cache "
                              "after the tree-only updates (the hard-negative miners read them); 0: "
                              "only at each epoch's end re-embedding."),
    "indexer_steps_schedule": ("Learning-rate schedule of the tree-only updates: constant, or linear "
                               "(to zero at the last encoder step)."),
    "indexing_negatives": ("Corpus-wide negatives for L_indexing: unjudged documents drawn from the "
                           "whole corpus per pair (their cached embeddings through the tree), in the "
                           "joint step and the tree-only updates (0 = in-batch and leaf negatives "
                           "only)."),
    "lambda_balance": ("Beyond the paper: in the tree-only updates (indexer_steps), this weight times "
                       "the tree's load imbalance over 512 random corpus documents per update (per "
                       "level B * sum of squared mean child probabilities - 1; 0 = even); L_indexing "
                       "on few training pairs otherwise piles the corpus into few leaves. 0 = off."),
    "floor": ("kmeans: every epoch, the k-means tree of the current encoder with as many leaves "
              "(k-means IVF on the same encoder) competes with the trained tree on dev by kmr_auc, and"
              " selection keeps the better (the log's dev_floor_kmeans says which); needs "
              "select_metric kmr_auc. none: the trained tree only."),
    "dev_eval": ("Evaluate on the dev split at every epoch end (exact search and, for EHI, the tree at"
                 " the largest beam scoring at most dev_budget): dev_* columns of the training log and"
                 " curves in the training figure."),
    "dev_split": "Split the per-epoch evaluation reads.",
    "dev_cost": Doc(("What a dev budget counts in the epoch's dev curve: documents (scored) or work "
                     "(documents plus routing, ehi/core/work.py). null = search.budget_cost, the cost the "
                     "tables read."), any_of=True),
    "dev_budget": "Fraction of documents scored at which the tree is read on dev.",
    "select": ("Final model: last (the last epoch's weights) or dev (the best dev epoch's, by "
               "select_metric; needs dev_eval)."),
    "select_metric": ("Training-log column select dev maximises; auto = dev_tree_ndcg@10 for EHI, "
                      "dev_ndcg@10 for DE; kmr_auc = the mean of the tree's dev nDCG@10 at 1, 2, 5 and"
                      " 10% scored (each at the largest measured point not above the budget, 0 where "
                      "none is), the area under the curve the tables report (recommended for EHI; DE "
                      "keeps dev_ndcg@10); or a dev column of the training log "
                      "(ehi.train.dev_eval.dev_metrics)."),
    "patience": ("With select dev: stop after this many epochs without a dev gain (0 = run every "
                 "epoch)."),
    "freeze_layers": ("Freeze the embeddings and the bottom k transformer layers; their outputs are "
                      "computed once per run and cached on disk, so steps and re-embeddings run only "
                      "the top layers (0 = full fine-tuning)."),
    "layer_cache_dtype": "Storage precision of the frozen-layer cache.",
    "grad_cache_chunk": ("GradCache: encode each step's texts in micro-batches of this many, "
                         "recomputed in the backward, so activation memory is one micro-batch's while "
                         "the loss and its in-batch negatives stay the whole batch's (0 = off; for "
                         "batches that do not fit)."),
}

TRAIN = Keys((TrainConfig, TrainSeeds), TRAIN_DOCS, (
    "Training hyper-parameters shared by EHI and the dual-encoder baseline (DE = the same loop without a "
    "tree: lambda_indexing = lambda_intra_leaf = 0, hard negatives from its own exact top-k). Mirrors "
    "ehi.train.loop.TrainConfig."), left_out=frozenset(WORKFLOW_SET["train"]))
