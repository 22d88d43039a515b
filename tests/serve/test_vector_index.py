"""The index of a vectors dataset (its encoder a vector tower, ``tower.json``) opens with
``load_index``, ``ehi info``, ``ehi export-faiss`` and ``ehi search``, and searches query vectors
without the folder it was trained on; a tree fitted on vectors (``ehi.fit_tree``) opens alike."""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from ehi.data.vector_world import WorldConfig, generate_world
from ehi.model.tower import load_tower, write_tower_spec
from ehi.model.tree import TreeIndexer
from ehi.search.tree_index import EHIIndex
from ehi.serve.api import SearchIndexError, load_index, save_search_index
from ehi.serve.cli import main

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def vector_index(tmp_path_factory):
    """A search index over a small world through a linear tower (weights not the identity), as
    rule search_index writes it from a training's saved tower; the world is then moved away."""
    root = tmp_path_factory.mktemp("vectors")
    world = root / "world"
    generate_world(world, WorldConfig(n_docs=200, dim=16, n_train=20, n_dev=10, n_test=10))
    tower = load_tower(write_tower_spec(root / "spec", world, kind="linear"))
    with torch.no_grad():
        tower.model["tower"].weight.add_(0.3 * torch.randn(16, 16, generator=torch.Generator().manual_seed(0)))
    tower.save(root / "trained")
    doc_keys = [f"d:{i}" for i in range(200)]
    torch.manual_seed(0)
    index = EHIIndex.build(tower.encode(doc_keys), TreeIndexer(16, height=1, branching=4))
    ids = (world / "doc_ids.txt").read_text().split()
    corpus = pd.DataFrame({"doc_id": ids, "title": "", "text": doc_keys})
    out = save_search_index(root / "search", index, root / "trained", corpus, {"height": 1, "max_length": 1})
    queries = np.load(world / "queries.npy")
    expected = tower.encode([f"q:{i}" for i in range(len(queries))])
    np.save(root / "queries.npy", queries)
    shutil.rmtree(world)
    return {"dir": out, "queries": root / "queries.npy", "expected": expected, "index": index, "ids": ids}


def test_a_tower_index_opens_and_searches_query_vectors_without_its_folder(vector_index):
    served = load_index(vector_index["dir"], device="cpu")
    assert served.info()["n_docs"] == 200
    queries = np.load(vector_index["queries"])
    full = served.n_leaves
    hits = served.search(queries[:3], beam=full, k=5)
    # the query side of the tower maps them as it mapped the training's query rows
    rows, _, _ = vector_index["index"].search(vector_index["expected"][:3], beam=full, k=5)
    assert [[h.doc_id for h in q] for q in hits] == [[vector_index["ids"][r] for r in row] for row in rows]


def test_ehi_info_export_faiss_and_search_query_vectors_on_a_tower_index(vector_index, tmp_path, capsys):
    index = str(vector_index["dir"])
    assert main(["info", "--index", index]) == 0
    assert "documents:   200" in capsys.readouterr().out
    assert main(["export-faiss", "--index", index, "--out", str(tmp_path / "x.faiss")]) == 0
    assert (tmp_path / "x.faiss").is_file()
    capsys.readouterr()
    assert main(["search", "--index", index, "--query-vectors", str(vector_index["queries"]), "-k", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "query_no\trank\tdoc_id\tscore\ttitle" and len(lines) == 1 + 3 * 40
    assert lines[1].split("\t")[0] == "0"  # no query_ids.txt beside the file: rows from 0


def test_query_vectors_of_another_width_are_one_line(vector_index, tmp_path, capsys):
    np.save(tmp_path / "wide.npy", np.ones((2, 8), np.float32))
    with pytest.raises(SearchIndexError, match=r"query vectors must be a float \(n, 16\) array"):
        load_index(vector_index["dir"], device="cpu").search(np.ones((2, 8), np.float32))
    with pytest.raises(SystemExit) as exc:
        main(["search", "--index", str(vector_index["dir"]), "--query-vectors", str(tmp_path / "wide.npy")])
    assert str(exc.value.code).startswith("ehi search: error: query vectors must be a float (n, 16) array")
    assert capsys.readouterr().out == ""  # refused before the header


def test_a_wrong_width_names_the_whole_files_shape(vector_index, tmp_path):
    np.save(tmp_path / "wide.npy", np.ones((600, 8), np.float32))
    with pytest.raises(SystemExit) as exc:
        main(["search", "--index", str(vector_index["dir"]), "--query-vectors", str(tmp_path / "wide.npy")])
    assert str(exc.value.code).endswith("array, got float32 (600, 8)")


def test_a_text_query_on_a_vectors_index_is_one_line_naming_query_vectors(vector_index, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["search", "--index", str(vector_index["dir"]), "--query", "hello"])
    assert str(exc.value.code).startswith("ehi search: error: this index is a vectors dataset's: it searches query "
                                          "vectors, not text (ehi search --query-vectors FILE.npy")
    assert "Traceback" not in capsys.readouterr().err


def test_ehi_info_on_a_vectors_index_names_no_token_length(vector_index, capsys):
    assert main(["info", "--index", str(vector_index["dir"])]) == 0
    encoder_line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("encoder:"))
    assert "max_length" not in encoder_line and "a vector tower over" in encoder_line and "--query-vectors" in encoder_line


def test_a_fitted_tree_opens_and_refuses_text_queries(tmp_path):
    import ehi

    docs = np.random.default_rng(0).normal(size=(100, 8)).astype(np.float32)
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)  # unit rows: each is its own best inner product
    ehi.fit_tree(docs, height=1, branching=4, init="kmeans").save(tmp_path / "tree")
    served = ehi.load_index(tmp_path / "tree")
    assert served.search(docs[:2], beam=4, k=1)[0][0].doc_id == "0"
    with pytest.raises(SearchIndexError, match="this index has no encoder"):
        served.search(["a text"])


def test_a_text_encoder_index_searches_its_own_query_vectors_as_its_texts(tmp_path):
    from ehi.model.encoder import load_encoder

    encoder = load_encoder("tiny-random", max_length=16, device="cpu")
    texts = [f"document {i} about {w}" for i, w in enumerate(["rivers", "castles", "violins", "engines"] * 10)]
    torch.manual_seed(0)
    index = EHIIndex.build(encoder.encode(texts, batch_size=16), TreeIndexer(encoder.dim, height=1, branching=4))
    corpus = pd.DataFrame({"doc_id": [f"d{i}" for i in range(40)], "title": "", "text": texts})
    served = load_index(save_search_index(tmp_path / "idx", index, encoder, corpus, {"max_length": 16}), device="cpu")
    queries = ["castles and rivers", "an engine"]
    by_text = served.search(queries, beam=4, k=5)
    assert served.search(encoder.encode(queries), beam=4, k=5) == by_text


@pytest.mark.parametrize("row, says", [
    (np.nan, "query vector row 1 holds NaN or infinite values"), (0.0, "query vector row 1 is all zeros"),
    (3e38, "query vector row 1 has norm 1.2e\\+39, above 1.84e\\+19: its scores would overflow float32"),
])
def test_a_query_row_that_cannot_be_ranked_is_refused_naming_the_row(vector_index, row, says):
    queries = np.load(vector_index["queries"])[:3].copy()
    queries[1] = row
    with pytest.raises(SearchIndexError, match=says):
        load_index(vector_index["dir"], device="cpu").search(queries, beam=2, k=5)


@pytest.mark.parametrize("beam, says", [(2.5, "beam must be an integer, got 2.5"), (True, "beam must be an integer, got True"),
                                        ("2", "beam must be an integer, got '2'"), (0, "beam must be between 1 and")])
def test_a_beam_that_is_no_integer_leaf_count_is_refused(vector_index, beam, says):
    queries = np.load(vector_index["queries"])[:2]
    with pytest.raises(SearchIndexError, match=says):
        load_index(vector_index["dir"], device="cpu").search(queries, beam=beam, k=5)


def test_k_above_the_corpus_is_capped_with_a_note_from_python_and_the_cli(vector_index, tmp_path, capsys):
    served = load_index(vector_index["dir"], device="cpu")
    queries = np.load(vector_index["queries"])[:2]
    with pytest.warns(UserWarning, match="k 1000000000 is above the 200 documents of the index: capped at 200"):
        rows, _, _ = served.search_arrays(queries, beam=served.n_leaves, k=10**9)
    assert rows.shape == (2, 200)
    with pytest.raises(SearchIndexError, match="k must be an integer, got 2.0"):
        served.search(queries, k=2.0)
    np.save(tmp_path / "q.npy", queries)
    assert main(["search", "--index", str(vector_index["dir"]), "--query-vectors", str(tmp_path / "q.npy"),
                 "-k", "1000000000", "--beam", str(served.n_leaves)]) == 0
    said = capsys.readouterr()
    assert "ehi search: -k 1000000000 is above the 200 documents of the index: capped at 200" in said.err
    assert len(said.out.splitlines()) == 1 + 2 * 200


@pytest.mark.parametrize("row, says", [(0.0, "q.npy: row 2 is all zeros"),
                                       (3e38, "q.npy: row 2 has norm 1.2e+39, above 1.84e+19")])
def test_the_cli_refuses_a_query_vector_it_cannot_rank_before_the_first_line(vector_index, tmp_path, capsys, row, says):
    queries = np.load(vector_index["queries"])[:3].copy()
    queries[2] = row
    np.save(tmp_path / "q.npy", queries)
    with pytest.raises(SystemExit) as exc:
        main(["search", "--index", str(vector_index["dir"]), "--query-vectors", str(tmp_path / "q.npy")])
    assert str(exc.value.code).startswith("ehi search: error: ") and says in str(exc.value.code)
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.parametrize("existing", [b"the run of yesterday\n", None])
def test_a_search_stopped_by_a_signal_leaves_its_out_file_as_it_was_and_no_temporary_file(vector_index, tmp_path,
                                                                                         signum, existing):
    rng = np.random.default_rng(0)
    np.save(tmp_path / "many.npy", rng.standard_normal((400_000, 16)).astype(np.float32))  # a search of seconds
    out = tmp_path / "run.tsv"
    if existing is not None:
        out.write_bytes(existing)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    job = subprocess.Popen([sys.executable, "-m", "ehi.serve.cli", "search", "--index", str(vector_index["dir"]),
                            "--query-vectors", str(tmp_path / "many.npy"), "--out", str(out)], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           # a user's Ctrl-C: SIGINT as a terminal delivers it, even where this test runs
                           # in the background of a shell, which starts its children with SIGINT ignored
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while not list(tmp_path.glob(".run.tsv.*.tmp")):  # the search has begun writing
        assert job.poll() is None and time.monotonic() < deadline, job.stderr.read().decode()[-2000:]
        time.sleep(0.01)
    job.send_signal(signum)
    assert job.wait(timeout=60) != 0  # stopped, not finished
    assert [p.name for p in tmp_path.iterdir() if p.name != "many.npy"] == (["run.tsv"] if existing else [])
    assert existing is None or out.read_bytes() == existing
