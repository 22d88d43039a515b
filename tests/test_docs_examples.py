"""Every Python and shell block of README.md and docs/ that a reader runs: verbatim, in a folder
that the fixture named by its ``<!-- example: NAME -->`` marker prepares (tests/docs_blocks.py)."""

import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from docs_blocks import REPO, RUNNABLE, blocks, command_lines, is_snakemake

BLOCKS = blocks()
EXAMPLES = [b for b in BLOCKS if b.marker and b.marker[0] == "example"]


def _ehi_command(folder: Path) -> Path:
    """``ehi`` (and ``.venv/bin/ehi``) in ``folder``: this checkout's command line."""
    script = f"#!/bin/sh\nexec {sys.executable} -m ehi.serve.cli \"$@\"\n"
    for bin_dir in (folder / "bin", folder / ".venv" / "bin"):
        bin_dir.mkdir(parents=True, exist_ok=True)
        (bin_dir / "ehi").write_text(script)
        (bin_dir / "ehi").chmod(stat.S_IRWXU)
    return folder / "bin"


def own_embeddings(folder: Path) -> None:
    """docs.npy, train_queries.npy, train_pairs.npy: 6 topics, queries near their documents."""
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(6, 16))
    topic = rng.integers(0, 6, 240)
    docs = centres[topic] + 0.3 * rng.normal(size=(240, 16))
    rows = rng.choice(240, 60, replace=False)
    queries = docs[rows] + 0.2 * rng.normal(size=(60, 16))
    unit = lambda x: (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)  # noqa: E731
    np.save(folder / "docs.npy", unit(docs))
    np.save(folder / "train_queries.npy", unit(queries))
    np.save(folder / "train_pairs.npy", np.stack([np.arange(60), rows], axis=1))


def search_index(folder: Path) -> None:
    """A search index of height 1 (8 leaves) at DIR and at the embedded default's path, a queries
    file, and ehi.faiss exported from it."""
    import ehi
    from ehi.model.encoder import load_encoder
    from ehi.model.tree import TreeIndexer
    from ehi.search.tree_index import EHIIndex
    from ehi.serve.api import save_search_index
    import torch

    rng = np.random.default_rng(0)
    words = ["river", "mountain", "castle", "garden", "engine", "violin", "harbor", "forest", "leaf", "collapse"]
    texts = [" ".join(rng.choice(words, 3, replace=False)) for _ in range(60)]
    corpus = pd.DataFrame({"doc_id": [f"d{i}" for i in range(60)], "title": [f"Title {i}" for i in range(60)],
                           "text": texts})
    encoder = load_encoder("tiny-random", max_length=16, device="cpu")
    torch.manual_seed(0)
    index = EHIIndex.build(encoder.encode(texts, batch_size=32), TreeIndexer(encoder.dim, height=1, branching=8))
    save_search_index(folder / "DIR", index, encoder, corpus, {"height": 1, "branching": 8, "max_length": 16})
    default = folder / "resources" / "synthetic" / "main" / "ehi"
    default.mkdir(parents=True)
    (default / "search_index").symlink_to(folder / "DIR")
    (folder / "queries.txt").write_text("what causes leaf collapse\nriver castle\n")
    ehi.export_faiss(folder / "DIR", folder / "ehi.faiss")


def trec_runs(folder: Path) -> None:
    """SciFact's main ehi+tree run at beams 10 and 30 as the pipeline writes it: the Parquet run and
    qrels, and the TREC files beside them (one judged query retrieves nothing at beam 10)."""
    from ehi.core.io import write_table
    from ehi.evaluate.trec import write_trec_qrels, write_trec_runs

    rng = np.random.default_rng(0)
    qrels = pd.DataFrame({"query_id": [f"q{i % 8}" for i in range(12)], "doc_id": [f"d{i}" for i in range(12)],
                          "relevance": np.int32(1), "split": "test"})
    rows = []
    for beam in (10.0, 30.0):
        for q in range(8 if beam == 30 else 7):
            for rank, doc in enumerate(rng.choice(20, 5, replace=False), 1):
                rows.append((f"q{q}", f"d{doc}", rank, 1.0 - rank / 10, "ehi+tree", "main", "beam", beam, 5))
    run = pd.DataFrame(rows, columns=["query_id", "doc_id", "rank", "score", "system", "variant", "budget_param",
                                      "budget_value", "n_scored"])
    run = run.astype({"rank": "int32", "score": "float32", "n_scored": "int64"})
    for df, kind, path in ((qrels, "qrels", "data/qrels.parquet"), (run, "run", "main/runs/ehi+tree.parquet")):
        (folder / "resources" / "scifact" / path).parent.mkdir(parents=True, exist_ok=True)
        write_table(df, kind, folder / "resources" / "scifact" / path)
    trec = folder / "resources" / "scifact" / "main" / "runs" / "trec" / "ehi+tree"
    write_trec_runs(run, trec)
    write_trec_qrels(qrels, trec / "qrels.txt")


def trained_encoder(folder: Path) -> None:
    """The main setting's trained encoder folder (tiny-random, saved as the pipeline saves it)."""
    from ehi.model.encoder import load_encoder

    load_encoder("tiny-random", max_length=16, device="cpu").save(folder / "resources/scifact/main/ehi/train/encoder")


def vectors_folder(folder: Path) -> None:
    """mine/: a small synthetic vector world (600 documents, 32-d, 150/50/50 queries) in the layout
    of docs/embeddings.md, what `ehi compare mine` reads."""
    from ehi.data.vector_world import WorldConfig, generate_world

    generate_world(folder / "mine", WorldConfig(n_docs=600, dim=32, n_train=150, n_dev=50, n_test=50,
                                                query_noise=2.1))


FIXTURES = {f.__name__: f for f in (own_embeddings, search_index, trec_runs, trained_encoder, vectors_folder)}
# what an example (a shell block) says it writes, checked after it
WRITES = {"vectors_folder": ("results/tables/mine_claims.md", "results/tables/mine_kmr.md",
                             "results/figures/mine/kmr_ndcg_at_10.png", "mine.trec")}
TIMEOUTS = {"vectors_folder": 1800}  # the whole pipeline, three seeds (docs/embeddings.md gives its cost)
# what an example's comments promise, checked after it in the same process
PROMISES = {"own_embeddings": """
import faiss, json
exported, meta = faiss.read_index("my_tree.faiss"), json.load(open("my_tree.faiss.json"))
faiss.extract_index_ivf(exported).nprobe = 8
append = np.tile(meta["query_augmentation"]["append"], (5, 1))
_, faiss_rows = exported.search(np.hstack([query_emb[:5], append]).astype("float32"), 10)
assert (faiss_rows == rows).all(), (faiss_rows, rows)
"""}


def test_every_block_a_reader_runs_is_marked_run_or_not_run():
    unmarked = [b.where for b in BLOCKS if b.language in RUNNABLE and b.marker is None
                and not all(map(is_snakemake, command_lines(b.code)))]
    assert not unmarked, f"mark these blocks <!-- example: FIXTURE --> or <!-- not run: REASON -->: {unmarked}"
    unknown = [(b.where, b.marker[1]) for b in EXAMPLES if b.marker[1] not in FIXTURES]
    assert not unknown, f"no such fixture in {__file__}: {unknown}"


@pytest.mark.parametrize("block", EXAMPLES, ids=lambda b: b.where)
def test_the_example_runs_verbatim(block, tmp_path):
    FIXTURES[block.marker[1]](tmp_path)
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
           "PATH": f"{_ehi_command(tmp_path)}{os.pathsep}{os.environ['PATH']}"}
    if block.language == "python":
        command = [sys.executable, "-c", block.code + PROMISES.get(block.marker[1], "")]
    else:
        command = ["bash", "-euo", "pipefail", "-c", block.code]
    proc = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=TIMEOUTS.get(block.marker[1], 300))
    assert proc.returncode == 0, f"{block.where} failed:\n{block.code}\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    missing = [path for path in WRITES.get(block.marker[1], ()) if not (tmp_path / path).is_file()]
    assert not missing, f"{block.where} did not write {missing}"
