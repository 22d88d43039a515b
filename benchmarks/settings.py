"""Sizes and repeats of the two benchmark modes. No heavy imports: the Snakefile reads this.

Training runs on one torch thread: on the shared 2-core machine (a niced training job beside us)
torch's 2-thread pool made MiniLM steps 3-10x slower and their times erratic, so the EHI/DE ratio
drowned in noise; one thread gives stable steps, and the matmul peak is measured on one thread too.
"""

QUICK = {
    "search": {"datasets": [["scifact", None], ["synthetic", 100_000]], "n_queries": 300, "rounds": 2,
               "n_latency": 30, "tree_steps": 100,
               "systems": ["ehi-scan", "faiss-ivf", "faiss-hnsw", "scann", "scann-ah"]},
    "build": {"sizes": [10_000, 100_000], "n_queries": 200, "repeats_small": 3, "big": 100_000, "tree_steps": 50},
    "training": {"steps": 2, "batch_size": 8, "n_docs": 200, "n_queries": 100, "threads": 1},
    "stream": {"max_queries": 10_000},
    # one thread for batched search too (the machine is shared; ratios stay comparable).
    # 8-bit codebooks (d/4 k-means of 256 centres each) take minutes to train here: SciFact only
    "export": {"datasets": [["scifact", None],
                            ["synthetic", 100_000, ["ehi-faiss", "faiss-ivf", "ehi-pq4", "ehi-pq4-rr",
                                                    "faiss-ivfpq4", "faiss-ivfpq4-rr", "scann-ah"]]],
               "n_queries": 200, "rounds": 2, "n_latency": 30, "tree_steps": 100, "threads": 1},
}
FULL = {
    "search": {"datasets": [["scifact", None], ["synthetic", 1_000_000]], "n_queries": 1000, "rounds": 3,
               "n_latency": 100, "tree_steps": 300},
    "build": {"sizes": [10_000, 100_000, 1_000_000], "n_queries": 500, "repeats_small": 3, "big": 1_000_000,
              "tree_steps": 300},
    "training": {"steps": 10, "batch_size": 16, "n_docs": 1000, "n_queries": 400, "threads": 1},
    "stream": {"max_queries": 100_000},  # a stream of 100,000 queries, bounded memory
    # 10^6, float32 and compressed systems in two groups (all indexes at once would not fit)
    "export": {"datasets": [["scifact", None], ["synthetic", 1_000_000]], "n_queries": 300, "rounds": 2,
               "n_latency": 100, "tree_steps": 300, "threads": 1,
               "groups": [["ehi-faiss", "faiss-ivf"],
                          ["ehi-pq4", "ehi-pq4-rr", "ehi-pq8", "ehi-pq8-rr", "faiss-ivfpq4", "faiss-ivfpq4-rr",
                           "faiss-ivfpq8", "faiss-ivfpq8-rr", "scann-ah"]]},
}


def settings(quick: bool) -> dict:
    return QUICK if quick else FULL
