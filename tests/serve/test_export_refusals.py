"""`ehi export-faiss` opens its source with every check `ehi search` runs and checks its options
first: what search refuses is never exported, and a refusal is one line with nothing written."""

import json
import shutil

import pytest
from safetensors.torch import load_file, save_file

from ehi.serve.cli import main
from tests.serve.test_export_faiss import search_dir  # noqa: F401 (the module's tiny index, a fixture)


def _edit_config(path):
    path.write_text(json.dumps({**json.loads(path.read_text()), "format_version": 99}))


def _older_index_layout(path):
    path.write_text(json.dumps({**json.loads(path.read_text()), "format_version": 1}))


def _drop_encoder_tensor(path):
    tensors = load_file(str(path))
    del tensors["encoder.layer.0.output.dense.bias"]
    save_file(tensors, str(path))


SOURCES = [
    ("another search-index format", "config.json", _edit_config, "search-index format 99, expected 1"),
    ("an index folder of the older layout", "index/index.json", _older_index_layout,
     "index format 1, this ehi reads format 2"),
    ("an encoder missing a tensor", "encoder/model.safetensors", _drop_encoder_tensor,
     "encoder.layer.0.output.dense.bias: missing from the file"),
    ("garbage config.json", "config.json", lambda p: p.write_text("{oops"), "config.json: not a readable JSON"),
]


def _refused(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    said = str(exc.value.code)
    out = capsys.readouterr()
    assert said.startswith("ehi export-faiss: error: ") and "\n" not in said and out.out == "", said
    assert "Traceback" not in out.err
    return said


@pytest.mark.parametrize("what, name, breaks, message", SOURCES, ids=[s[0] for s in SOURCES])
def test_an_index_search_refuses_is_not_exported(search_dir, tmp_path, capsys, what, name, breaks, message):  # noqa: F811
    broken = tmp_path / "index"
    shutil.copytree(search_dir, broken)
    breaks(broken / name)
    out = tmp_path / "out" / "ehi.faiss"
    assert message in _refused(["export-faiss", "--index", str(broken), "--out", str(out)], capsys)
    assert not out.parent.exists()


@pytest.mark.parametrize("option, message", [
    (["--rerank", "-1"], "--rerank must be 0 (off) or the number of candidates to re-score, got -1"),
    (["--pq", "0"], "--pq M must be a positive divisor of the embedding dimension, got 0"),
    (["--pq", "7"], "M must divide the embedding dimension"),
])
def test_bad_options_are_refused_before_anything_is_written(search_dir, tmp_path, capsys, option, message):  # noqa: F811
    out = tmp_path / "ehi.faiss"
    assert message in _refused(["export-faiss", "--index", str(search_dir), "--out", str(out), *option], capsys)
    assert list(tmp_path.iterdir()) == []


def test_an_output_that_cannot_be_written_is_one_line(search_dir, tmp_path, capsys):  # noqa: F811
    (tmp_path / "a_file").write_text("x")
    said = _refused(["export-faiss", "--index", str(search_dir), "--out", str(tmp_path / "a_file" / "ehi.faiss")], capsys)
    assert "a_file" in said
    (tmp_path / "a_dir").mkdir()
    assert "a_dir: is a directory" in _refused(["export-faiss", "--index", str(search_dir), "--out",
                                               str(tmp_path / "a_dir")], capsys)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_dir", "a_file"] and not list((tmp_path / "a_dir").iterdir())


@pytest.mark.parametrize("inside", ["index/index.faiss", "index/index", "export.faiss"])
def test_an_export_into_the_index_folder_is_refused_and_the_index_still_searches(search_dir, tmp_path, capsys, inside):  # noqa: F811
    from ehi.serve.api import load_index

    index = tmp_path / "S"
    shutil.copytree(search_dir, index)
    before = {p: p.read_bytes() for p in index.rglob("*") if p.is_file()}
    said = _refused(["export-faiss", "--index", str(index), "--out", str(index / inside), "--pq", "4"], capsys)
    assert f"{index / inside}: inside the index folder {index}" in said
    assert {p: p.read_bytes() for p in index.rglob("*") if p.is_file()} == before
    assert len(load_index(index, device="cpu").search(["river castle"], k=3)[0]) == 3


def test_the_library_refuses_an_export_over_a_bare_index_s_own_file(tmp_path):
    import numpy as np

    import ehi
    from ehi.core.errors import SearchIndexError

    docs = np.random.default_rng(0).normal(size=(60, 8)).astype(np.float32)
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)  # unit rows: each is its own best inner product
    ehi.fit_tree(docs, height=1, branching=4, init="kmeans").save(tmp_path / "tree")
    with pytest.raises(SearchIndexError, match="index.faiss: inside the index folder"):
        ehi.export_faiss(tmp_path / "tree", tmp_path / "tree" / "index.faiss", pq_m=4, row_ids=True)
    assert ehi.load_index(tmp_path / "tree").search(docs[:1], beam=4, k=1)[0][0].doc_id == "0"


def test_a_height_1_export_over_a_height_2_one_leaves_no_router_behind(tmp_path):
    import numpy as np

    import ehi
    from ehi.search.exported import load_export, router_path

    docs = np.random.default_rng(0).normal(size=(60, 8)).astype(np.float32)
    out = tmp_path / "ehi.faiss"
    for height, branching in ((2, 3), (1, 4)):
        ehi.fit_tree(docs, height=height, branching=branching, init="kmeans").save(tmp_path / f"h{height}")
        ehi.export_faiss(tmp_path / f"h{height}", out, row_ids=True)
        assert router_path(out).exists() == (height == 2)
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == ["ehi.faiss", "ehi.faiss.json"]
    assert load_export(out).meta["height"] == 1
