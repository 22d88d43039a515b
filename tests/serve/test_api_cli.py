"""The usable index: save_search_index / load_index and the ``ehi`` command, on a tiny index."""

import io
import json
import subprocess
from pathlib import Path
import sys

import numpy as np
import pandas as pd
import pytest
import torch

from ehi.model.tree_stats import gini
from ehi.serve.api import SearchIndexError, load_index, save_search_index
from ehi.serve.cli import main
from ehi.model.encoder import Encoder, load_encoder
from ehi.search.tree_index import EHIIndex
from ehi.model.tree import TreeIndexer

WORDS = ["river", "mountain", "castle", "garden", "engine", "violin", "harbor", "forest"]
QUERIES = ["river castle", "violin engine harbor", "garden forest", "mountain"]
TRAIN_CONFIG = {"epochs": 1, "height": 2, "branching": 2, "max_length": 16}


def _corpus() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    texts = [" ".join(rng.choice(WORDS, 3, replace=False)) for _ in range(40)]
    # every fourth document has no title: it is shown by its text
    titles = ["" if i % 4 == 0 else f"Title {i}" for i in range(40)]
    return pd.DataFrame({"doc_id": [f"d{i:02d}" for i in range(40)], "title": titles, "text": texts})


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    corpus = _corpus()
    encoder = load_encoder("tiny-random", max_length=16, device="cpu")
    emb = encoder.encode((corpus.title + " " + corpus.text).tolist(), batch_size=16)  # (40, 32)
    torch.manual_seed(0)
    index = EHIIndex.build(emb, TreeIndexer(encoder.dim, height=2, branching=2))
    out = save_search_index(tmp_path_factory.mktemp("idx") / "search", index, encoder, corpus, TRAIN_CONFIG)
    return {"dir": out, "corpus": corpus, "encoder": encoder, "emb": emb, "index": index}


def test_load_index_search_matches_ehi_index_search(built):
    loaded = load_index(built["dir"], device="cpu")
    for beam in (1, 2, 4):
        hits = loaded.search(QUERIES, beam=beam, k=5, batch_size=16)
        rows, scores, _ = built["index"].search(built["encoder"].encode(QUERIES, batch_size=16), beam=beam, k=5)
        for q_hits, q_rows, q_scores in zip(hits, rows, scores):
            valid = q_rows >= 0
            assert [h.doc_id for h in q_hits] == built["corpus"].doc_id.to_numpy()[q_rows[valid]].tolist()
            np.testing.assert_allclose([h.score for h in q_hits], q_scores[valid], atol=1e-5)


def test_full_beam_is_exact_search_and_titles_fall_back_to_text(built):
    loaded = load_index(built["dir"], device="cpu")
    hits = loaded.search(QUERIES[:1], beam=loaded.n_leaves, k=40)[0]
    exact = np.argsort(-(built["emb"] @ built["encoder"].encode(QUERIES[:1])[0]), kind="stable")
    assert [h.doc_id for h in hits][:10] == built["corpus"].doc_id.to_numpy()[exact[:10]].tolist()
    by_id = {h.doc_id: h.title for h in hits}
    assert by_id["d01"] == "Title 1" and by_id["d00"] == built["corpus"].text[0]


def test_info_describes_tree_balance_and_config(built):
    loaded = load_index(built["dir"], device="cpu")
    info = loaded.info()
    assert (info["tree"]["height"], info["tree"]["branching"], info["tree"]["n_leaves"]) == (2, 2, 4)
    assert info["n_docs"] == 40 and info["train_config"] == TRAIN_CONFIG
    sizes = built["index"].leaf_sizes
    assert info["leaf_sizes"]["max"] == sizes.max() and info["leaf_sizes"]["empty"] == (sizes == 0).sum()
    assert gini([5, 5, 5, 5]) == 0 and gini([0, 0, 0, 8]) == pytest.approx(0.75)
    assert not isinstance(loaded._encoder, Encoder)  # info never loaded the model


def test_save_from_an_encoder_folder_and_errors(built, tmp_path):
    built["encoder"].save(tmp_path / "enc")
    out = save_search_index(tmp_path / "s2", built["index"], tmp_path / "enc", built["corpus"], TRAIN_CONFIG)
    assert load_index(out, device="cpu").search(["river"], k=3)[0][0].doc_id.startswith("d")
    with pytest.raises(ValueError, match="corpus has 39 documents"):
        save_search_index(tmp_path / "s3", built["index"], built["encoder"], built["corpus"][:39])
    with pytest.raises(SearchIndexError, match="no search index"):
        load_index(tmp_path / "nope")
    with pytest.raises(SearchIndexError, match="missing docs.parquet"):
        (out / "docs.parquet").unlink()
        load_index(out)


def test_cli_single_query_prints_a_table(built, capsys):
    assert main(["search", "--index", str(built["dir"]), "--query", "river castle", "--beam", "4", "-k", "3",
                 "--device", "cpu"]) == 0
    out = capsys.readouterr().out.splitlines()
    want = load_index(built["dir"], device="cpu").search(["river castle"], beam=4, k=3)[0]
    assert out[0] == "query: river castle" and out[1].split() == ["rank", "score", "doc_id", "title"]
    assert [line.split()[2] for line in out[2:]] == [h.doc_id for h in want]


def _tsv(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text), sep="\t", dtype={"doc_id": str, "title": str}, keep_default_na=False)


def test_cli_queries_file_and_stdin_in_batches(built, capsys, tmp_path, monkeypatch):
    path = tmp_path / "queries.txt"
    path.write_text("river castle\n\nviolin engine harbor\ngarden forest\nmountain\n")
    base = ["search", "--index", str(built["dir"]), "--beam", "4", "-k", "3", "--device", "cpu"]
    assert main(base + ["--queries-file", str(path), "--batch-size", "2"]) == 0
    run = _tsv(capsys.readouterr().out)
    assert list(run.columns) == ["query_no", "rank", "doc_id", "score", "title"]
    assert sorted(set(run.query_no)) == [1, 3, 4, 5]  # line numbers; the blank line 2 is skipped
    assert (run.groupby("query_no")["rank"].apply(list) == pd.Series([[1, 2, 3]] * 4, index=[1, 3, 4, 5])).all()
    want = load_index(built["dir"], device="cpu").search(QUERIES, beam=4, k=3)
    assert run.doc_id.tolist() == [h.doc_id for hits in want for h in hits]
    monkeypatch.setattr(sys, "stdin", io.StringIO(path.read_text()))
    assert main(base + ["--queries-file", "-"]) == 0
    pd.testing.assert_frame_equal(_tsv(capsys.readouterr().out)[["query_no", "doc_id"]], run[["query_no", "doc_id"]])


def test_cli_info(built, capsys):
    assert main(["info", "--index", str(built["dir"])]) == 0
    out = capsys.readouterr().out
    assert "height H=2, branching B=2, 4 leaves" in out and "gini" in out and "max_length: 16" in out
    assert main(["info", "--index", str(built["dir"]), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["train_config"] == TRAIN_CONFIG


def test_cli_errors_are_clear_and_without_traceback(built, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["search", "--index", str(built["dir"]), "--query", "x", "--beam", "9", "--device", "cpu"])
    assert "beam must be between 1 and the number of leaves (4), got 9" in str(exc.value.code)
    with pytest.raises(SystemExit) as exc:
        main(["info", "--index", str(tmp_path / "missing")])
    assert str(exc.value.code).startswith("ehi info: error: no search index at")
    with pytest.raises(SystemExit) as exc:
        main(["search", "--index", str(built["dir"]), "--queries-file", str(tmp_path / "none.txt")])
    assert str(exc.value.code) == f"ehi search: error: --queries-file {tmp_path / 'none.txt'}: no such file"
    with pytest.raises(SystemExit) as exc:  # neither --query nor --queries-file: argparse's usage error
        main(["search", "--index", str(built["dir"])])
    assert exc.value.code == 2 and "one of the arguments --query --queries-file --query-vectors is required" in capsys.readouterr().err


def test_cli_trec_format_takes_query_ids_from_tab_separated_lines(built, capsys, tmp_path):
    path = tmp_path / "queries.tsv"
    path.write_text("Q-1\triver castle\nviolin engine harbor\n")
    assert main(["search", "--index", str(built["dir"]), "--queries-file", str(path), "--format", "trec",
                 "--beam", "2", "-k", "3", "--device", "cpu"]) == 0
    lines = [line.split() for line in capsys.readouterr().out.splitlines()]
    want = load_index(built["dir"], device="cpu").search(["river castle", "violin engine harbor"], beam=2, k=3)
    assert [line[0] for line in lines] == ["Q-1"] * 3 + ["2"] * 3  # the line number where no id is given
    assert [line[2] for line in lines] == [h.doc_id for hits in want for h in hits]
    assert {(line[1], line[5]) for line in lines} == {("Q0", "ehi@beam=2")}
    assert [int(line[3]) for line in lines] == [1, 2, 3, 1, 2, 3]
    assert all(float(a[4]) > float(b[4]) for a, b in zip(lines, lines[1:]) if a[0] == b[0])


@pytest.mark.parametrize("text, said", [
    ("Q-1\triver castle\nQ-1\tgarden forest\n", "line 2: qid 'Q-1' repeats line 1's; a TREC run needs each qid once"),
    ("river castle\n1\tgarden forest\n", "line 2: qid '1' repeats line 1's; a TREC run needs each qid once"),  # a line number colliding with a qid
    ("q1\t\nriver castle\n", "line 1: qid 'q1' has no query text after the tab"),
    ("q\x001\triver castle\n", "line 1: qid 'q\\x001' before the tab is empty or holds whitespace or a control character"),
    ("two words\triver castle\n", "line 1: qid 'two words' before the tab is empty or holds whitespace or a control character"),
])
def test_cli_trec_refuses_a_query_file_whose_qids_would_merge_or_change(built, capsys, tmp_path, text, said):
    path = tmp_path / "queries.tsv"
    path.write_text(text)
    with pytest.raises(SystemExit) as exc:
        main(["search", "--index", str(built["dir"]), "--queries-file", str(path), "--format", "trec", "--device", "cpu"])
    assert str(exc.value.code) == f"ehi search: error: {path}, {said}"
    assert capsys.readouterr().out == ""  # nothing written before the refusal


def test_cli_trec_refuses_a_repeated_query_argument_and_a_doc_id_with_whitespace(built, capsys, tmp_path):
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq

    with pytest.raises(SystemExit) as exc:
        main(["search", "--index", str(built["dir"]), "--query", "x\triver", "--query", "x\tcastle", "--format", "trec"])
    assert "--query, line 2: qid 'x' repeats line 1's" in str(exc.value.code)
    index_dir = tmp_path / "index"
    shutil.copytree(built["dir"], index_dir)
    table = pq.read_table(index_dir / "docs.parquet")
    ids = table.column("doc_id").to_pylist()
    pq.write_table(table.set_column(0, "doc_id", pa.array(ids[:-1] + ["last doc"], pa.string())), index_dir / "docs.parquet")
    with pytest.raises(SystemExit) as exc:  # the last document is rarely a hit: checked before any line all the same
        main(["search", "--index", str(index_dir), "--query", "river", "--format", "trec", "--device", "cpu"])
    assert str(exc.value.code) == (f"ehi search: error: {index_dir / 'docs.parquet'}: doc_id 'last doc' holds whitespace "
                                   "or a control character, which a TREC run file cannot carry (1 such)")
    assert capsys.readouterr().out == ""
    with pytest.raises(SystemExit):
        main(["search", "--help"])
    assert "its line number; every qid once" in " ".join(capsys.readouterr().out.split())  # the rule, stated


def test_cli_says_when_a_query_gets_fewer_than_k_documents(built, capsys):
    want = load_index(built["dir"], device="cpu").search(["river castle"], beam=1, k=40)[0]
    assert 0 < len(want) < 40  # one leaf of four holds part of the corpus
    main(["search", "--index", str(built["dir"]), "--query", "river castle", "--beam", "1", "-k", "40", "--device", "cpu"])
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0] == f"query: river castle  ({len(want)} of -k 40: the visited leaves hold no more)"
    assert captured.err.strip() == ("ehi search: 1 of 1 queries got fewer than -k 40 documents: their visited leaves "
                                    "hold fewer (a larger --beam visits more leaves)")
    main(["search", "--index", str(built["dir"]), "--query", "river castle", "--beam", "4", "-k", "3", "--device", "cpu"])
    assert capsys.readouterr().err == ""  # k hits: nothing said


@pytest.mark.parametrize("command", ["search", "info", "export-faiss"])
def test_cli_help_describes_the_command_with_examples(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = capsys.readouterr().out
    assert "examples:" in text and f"ehi {command} --index DIR" in text
    described = {"search": "route it down the tree", "info": "Describe a saved search index",
                 "export-faiss": "Write the index as a FAISS index file"}
    assert described[command] in " ".join(text.split())


def test_cli_says_its_version_without_loading_torch():
    import ehi

    run = subprocess.run([sys.executable, "-c", "import sys; from ehi.serve.cli import main\n"
                          "try: main(['--version'])\nexcept SystemExit: print('torch' in sys.modules)"],
                         capture_output=True, text=True, cwd=Path(ehi.__file__).parents[1])
    assert run.stdout.split() == ["ehi", ehi.__version__, "False"], run.stderr
