"""Every Python and shell block of README.md and docs/ that a reader runs: verbatim, in a folder
that the fixture named by its ``<!-- example: NAME -->`` marker prepares (tests/docs_blocks.py)."""

import os
import re
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
    """``ehi`` (and ``.venv/bin/ehi``, ``.venv/bin/python``) in ``folder``: this checkout's command line."""
    script = f"#!/bin/sh\nexec {sys.executable} -m ehi.serve.cli \"$@\"\n"
    for bin_dir in (folder / "bin", folder / ".venv" / "bin"):
        bin_dir.mkdir(parents=True, exist_ok=True)
        (bin_dir / "ehi").write_text(script)
        (bin_dir / "ehi").chmod(stat.S_IRWXU)
    (folder / ".venv" / "bin" / "python").write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")
    (folder / ".venv" / "bin" / "python").chmod(stat.S_IRWXU)
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


def pipeline_run(folder: Path, run: Path) -> None:
    """What `all` leaves for the embedded default, from the test config's real run (the session's
    ``test_config_run``; its dataset is ``test``): ``resources/synthetic`` and ``results/synthetic``
    are its folders, ``DIR`` its main search index, beside a queries file and ``ehi.faiss``
    exported from that index. Blocks read these; nothing writes into the shared run."""
    import ehi

    for kind in ("resources", "results"):
        (folder / kind).mkdir()
        (folder / kind / "synthetic").symlink_to(run / kind / "test")
    (folder / "DIR").symlink_to(run / "resources" / "test" / "main" / "ehi" / "search_index")
    (folder / "queries.txt").write_text("what causes leaf collapse\nriver castle\n")
    ehi.export_faiss(folder / "DIR", folder / "ehi.faiss")


RUN_FIXTURES = {f.__name__: f for f in (pipeline_run,)}  # on the session's run of the test config


def pipeline_ndcg_at_beam_4(run: Path) -> float:
    """The pipeline's own nDCG@10 of ehi+tree at beam 4: what the results_files.md readers print."""
    summary = pd.read_parquet(run / "results" / "test" / "main" / "summary.parquet")
    at = summary[(summary.system == "ehi+tree") & (summary.budget_value == 4) & (summary.metric == "ndcg@10")]
    return float(at.value.iloc[0])


def vectors_folder(folder: Path) -> None:
    """mine/: a small synthetic vector world (600 documents, 32-d, 150/50/50 queries) in the layout
    of docs/embeddings.md, what `ehi compare mine` reads."""
    from ehi.data.vector_world import WorldConfig, generate_world

    generate_world(folder / "mine", WorldConfig(n_docs=600, dim=32, n_train=150, n_dev=50, n_test=50,
                                                query_noise=2.1))


FIXTURES = {f.__name__: f for f in (own_embeddings, vectors_folder)}
# what an example (a shell block) says it writes, checked after it
WRITES = {"vectors_folder": ("mine_compare/results/tables/mine_claims.md", "mine_compare/results/tables/mine_kmr.md",
                             "mine_compare/results/figures/mine/kmr_ndcg_at_10.png", "mine.trec")}
TIMEOUTS = {"vectors_folder": 1800}  # the frozen study, one seed (--quick; docs/embeddings.md gives its cost)
# what an example's comments promise, checked after it in the same process
PROMISES = {"own_embeddings": """
import faiss
exported = faiss.read_index("my_tree.faiss")
faiss.extract_index_ivf(exported).nprobe = 8
_, faiss_rows = exported.search(query_emb[:5], 10)
assert (faiss_rows == rows).all(), (faiss_rows, rows)
"""}


def test_every_block_a_reader_runs_is_marked_run_or_not_run():
    unmarked = [b.where for b in BLOCKS if b.language in RUNNABLE and b.marker is None
                and not all(map(is_snakemake, command_lines(b.code)))]
    assert not unmarked, f"mark these blocks <!-- example: FIXTURE --> or <!-- not run: REASON -->: {unmarked}"
    unknown = [(b.where, b.marker[1]) for b in EXAMPLES if b.marker[1] not in {**FIXTURES, **RUN_FIXTURES}]
    assert not unknown, f"no such fixture in {__file__}: {unknown}"


@pytest.mark.integration  # on the shared run of the test config, or `ehi compare` (the whole pipeline)
@pytest.mark.parametrize("block", EXAMPLES, ids=lambda b: b.where)
def test_the_example_runs_verbatim(block, tmp_path, request):
    run = None
    if block.marker[1] in RUN_FIXTURES:
        run = request.getfixturevalue("test_config_run").workdir
        RUN_FIXTURES[block.marker[1]](tmp_path, run)
    else:
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
    if run is not None and re.search(r"beam=4\.trec|budget_value == 4", block.code):  # a reader of the pipeline's metric
        printed = float(re.search(r"0\.\d{4,}", proc.stdout).group())
        assert printed == pytest.approx(pipeline_ndcg_at_beam_4(run), abs=6e-5), (block.where, proc.stdout)
    missing = [path for path in WRITES.get(block.marker[1], ()) if not (tmp_path / path).is_file()]
    assert not missing, f"{block.where} did not write {missing}"
