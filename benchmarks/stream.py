"""Load: the search API answers a long stream of queries in batches with bounded memory.

A search index is built on a synthetic corpus (the tiny random encoder by default: memory, not
quality, is measured), then ``ehi search --queries-file FILE`` runs in a fresh process for query
files of growing length, its ranked lists going to /dev/null. Each run's peak resident set size
(the child's ``ru_maxrss``) is recorded. Bounded memory means the peak does not grow with the
number of queries: the table gives the peak at each length and its ratio to the shortest run's.

    python -m benchmarks.stream --out results/benchmarks/stream.parquet [--max-queries 100000]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd


def build_index(out_dir: Path, encoder_name: str, n_docs: int) -> Path:
    """A search index over a synthetic corpus, with an untrained tree fitted to its embeddings."""
    from ehi.serve.api import save_search_index
    from ehi.data.synthetic import SyntheticConfig, generate
    from ehi.data.dataset import doc_texts
    from ehi.model.encoder import load_encoder
    from ehi.search.tree_index import EHIIndex
    from ehi.model.tree import TreeIndexer

    data = generate(SyntheticConfig(n_docs=n_docs, n_queries=50))
    encoder = load_encoder(encoder_name, max_length=32, device="cpu", seed=0)
    emb = encoder.encode(doc_texts(data.corpus), 256)
    tree = TreeIndexer(emb.shape[1], height=2, branching=8)
    tree.standardize_(emb)
    index = EHIIndex.build(emb, tree)
    return save_search_index(out_dir, index, encoder, data.corpus)


def query_file(path: Path, n: int, seed: int = 0) -> Path:
    """n query lines of 3-6 vocabulary words each."""
    from ehi.data.synthetic import vocabulary_words

    words = np.array(vocabulary_words())
    rng = np.random.default_rng(seed)
    with open(path, "w") as f:
        for _ in range(n):
            f.write(" ".join(rng.choice(words, rng.integers(3, 7))) + "\n")
    return path


def peak_rss_of_search(index_dir: Path, queries: Path, batch_size: int) -> tuple[float, float]:
    """Run ``ehi search`` over the file in a child process; return (seconds, its peak RSS in MiB)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    start = time.perf_counter()
    with open(os.devnull, "w") as sink:
        subprocess.run([sys.executable, "-m", "ehi.serve.cli", "search", "--index", str(index_dir), "--queries-file",
                        str(queries), "--beam", "2", "-k", "10", "--batch-size", str(batch_size), "--device", "cpu"],
                       stdout=sink, check=True, env=env)
    seconds = time.perf_counter() - start
    # KiB on Linux, and a running maximum over every child so far: runs go shortest first, so a
    # peak that grows with the stream shows up, and one that does not stays at the first run's
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return seconds, peak / 1024.0


def run(max_queries: int = 100_000, encoder: str = "tiny-random", n_docs: int = 3000, batch_size: int = 256,
        lengths: list[int] | None = None) -> pd.DataFrame:
    lengths = lengths or sorted({max(1, max_queries // 100), max(1, max_queries // 10), max_queries})
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        index_dir = build_index(tmp / "index", encoder, n_docs)
        # shortest first: ru_maxrss of children is a running maximum, so a growing peak shows up
        for n in sorted(lengths):
            seconds, peak = peak_rss_of_search(index_dir, query_file(tmp / f"q{n}.txt", n), batch_size)
            rows.append({"n_queries": n, "batch_size": batch_size, "seconds": seconds, "queries_per_second": n / seconds,
                         "peak_rss_mib": peak, "encoder": encoder, "n_docs": n_docs})
    table = pd.DataFrame(rows)
    table["peak_over_shortest"] = table.peak_rss_mib / table.peak_rss_mib.iloc[0]
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="Parquet file to write")
    parser.add_argument("--max-queries", type=int, default=100_000)
    parser.add_argument("--encoder", default="tiny-random")
    parser.add_argument("--batch-size", type=int, default=256)
    args = parser.parse_args(argv)
    table = run(args.max_queries, args.encoder, batch_size=args.batch_size)
    from ehi.core.io import atomic_path

    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(args.out) as tmp:
        table.to_parquet(tmp, index=False)
    print(table.to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
