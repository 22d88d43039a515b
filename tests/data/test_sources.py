"""Source parsers on fixture files in each source's real format, and safe extraction (downloads:
test_downloads.py)."""

import gzip
import io
import json
import tarfile
import zipfile
from pathlib import Path

import pytest

from ehi.data.download import safe_extract
from ehi.data.formats import load_msmarco, load_nq320k, load_xmc
from ehi.data.sources import load_dataset
from ehi.data.validate import DataError


def write_msmarco(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "collection.tsv").write_text("".join(f"{i}\tpassage number {i}\n" for i in range(6)))
    (root / "queries.train.tsv").write_text("100\twhat is zero\n101\twhat is one\n102\tnever judged\n")
    (root / "qrels.train.tsv").write_text("100\t0\t0\t1\n101\t0\t1\t1\n101\t0\t2\t1\n")  # TREC, tab-separated
    (root / "queries.dev.small.tsv").write_text("200\tdev question\n")
    (root / "qrels.dev.small.tsv").write_text("200\t0\t3\t1\n")
    with gzip.open(root / "msmarco-test2019-queries.tsv.gz", "wt") as fh:
        fh.write("300\tdl question\n301\tunjudged dl question\n")
    (root / "2019qrels-pass.txt").write_text("300 Q0 4 3\n300 Q0 5 0\n")  # TREC, space-separated, graded
    return root


def test_msmarco_parser(tmp_path, caplog):
    ds = load_msmarco(write_msmarco(tmp_path / "msmarco"))
    assert ds.name == "msmarco" and len(ds.corpus) == 6 and set(ds.corpus.title) == {""}
    assert dict(zip(ds.queries.query_id, ds.queries.split)) == {"100": "train", "101": "train", "200": "dev", "300": "test"}
    test = ds.qrels[ds.qrels.split == "test"]
    assert test[["doc_id", "relevance"]].values.tolist() == [["4", 3], ["5", 0]]
    assert "2 query(ies) without judgements" in caplog.text  # 102 and 301


def test_msmarco_split_needs_both_files(tmp_path):
    root = write_msmarco(tmp_path / "msmarco")
    (root / "queries.dev.small.tsv").unlink()
    with pytest.raises(DataError, match=r"split 'dev' needs one of \['queries.dev.small.tsv', 'queries.dev.tsv'\]"):
        load_msmarco(root)
    assert set(load_msmarco(root, splits=["train"]).queries.split) == {"train"}


def test_msmarco_bad_trec_qrels_line(tmp_path):
    root = write_msmarco(tmp_path / "msmarco")
    (root / "2019qrels-pass.txt").write_text("300 Q0 4 3\n300 Q0 5\n")
    with pytest.raises(DataError, match=r"2019qrels-pass\.txt, line 2: expected 4 columns, found 3"):
        load_msmarco(root)


def write_nq320k(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    docs = [{"docid": i, "document": f"Title {i} the document text {i}"} for i in range(4)]
    train = [
        {"query": "who wrote doc zero", "docid": 0, "nq_id": "-11", "title": "Title 0"},
        {"query": "who wrote doc zero", "docid": 1, "nq_id": "-11", "title": "Title 1"},  # second relevant doc
        {"query": "no nq id here", "docid": 2},
    ]
    valid = [{"query": "when was doc three", "docid": 3, "nq_id": "77"}]
    for name, rows in (("corpus.jsonl", docs), ("train.jsonl", train), ("valid.jsonl", valid)):
        (root / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def test_nq320k_parser(tmp_path):
    ds = load_nq320k(write_nq320k(tmp_path / "nq"))
    assert ds.name == "nq320k" and len(ds.corpus) == 4
    assert dict(zip(ds.queries.query_id, ds.queries.split)) == {"-11": "train", "train-3": "train", "77": "test"}
    assert ds.qrels[ds.qrels.query_id == "-11"].doc_id.tolist() == ["0", "1"]


def test_nq320k_missing_docid(tmp_path):
    root = write_nq320k(tmp_path / "nq")
    (root / "valid.jsonl").write_text('{"query": "x", "docid": 3}\n{"query": "no doc"}\n')
    with pytest.raises(DataError, match=r"valid\.jsonl, line 2: missing key 'docid'"):
        load_nq320k(root)


def write_xmc(root: Path, test_targets=(2,)) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    labels = [{"uid": f"L{i}", "title": f"label title {i}"} for i in range(3)]
    trn = [{"uid": "P0", "title": "point zero", "content": "", "target_ind": [0, 1], "target_rel": [1.0, 1.0]},
           {"uid": "P1", "title": "point one", "content": "", "target_ind": [], "target_rel": []}]
    tst = [{"uid": "T0", "title": "test point", "content": "", "target_ind": list(test_targets), "target_rel": [1.0]}]
    for name, rows in (("lbl.json.gz", labels), ("trn.json.gz", trn), ("tst.json.gz", tst)):
        with gzip.open(root / name, "wt") as fh:
            fh.write("".join(json.dumps(r) + "\n" for r in rows))
    return root


def test_xmc_parser(tmp_path, caplog):
    ds = load_xmc(write_xmc(tmp_path / "xmc"))
    assert ds.corpus.values.tolist() == [["L0", "", "label title 0"], ["L1", "", "label title 1"], ["L2", "", "label title 2"]]
    assert dict(zip(ds.queries.query_id, ds.queries.split)) == {"P0": "train", "T0": "test"}
    assert ds.qrels.values.tolist() == [["P0", "L0", 1, "train"], ["P0", "L1", 1, "train"], ["T0", "L2", 1, "test"]]
    assert "1 query(ies) without judgements" in caplog.text  # P1 has no target


def test_xmc_target_out_of_range(tmp_path):
    with pytest.raises(DataError, match=r"tst\.json\.gz, line 1: target_ind 7 is not a label index \(0\.\.2\)"):
        load_xmc(write_xmc(tmp_path / "xmc", test_targets=(7,)))


# ---- archives -----------------------------------------------------------------------------------


def test_safe_extract_rejects_path_traversal(tmp_path):
    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as zf:
        zf.writestr("good.txt", "fine")
        zf.writestr("../evil", "escaped")
    dest = tmp_path / "dest"
    with pytest.raises(DataError, match=r"evil\.zip: unsafe member '\.\./evil'"):
        safe_extract(evil, dest)
    assert not (tmp_path / "evil").exists() and not (dest / "good.txt").exists()


def test_safe_extract_rejects_absolute_zip_and_tar_traversal(tmp_path):
    absolute = tmp_path / "abs.zip"
    with zipfile.ZipFile(absolute, "w") as zf:
        zf.writestr(zipfile.ZipInfo("/tmp/ehi-absolute"), "x")
    with pytest.raises(DataError, match="unsafe member '/tmp/ehi-absolute'"):
        safe_extract(absolute, tmp_path / "d1")
    tar = tmp_path / "evil.tar.gz"
    with tarfile.open(tar, "w:gz") as tf:
        info = tarfile.TarInfo("data/../../evil")
        info.size = 1
        tf.addfile(info, io.BytesIO(b"x"))
    with pytest.raises(DataError, match=r"unsafe member 'data/\.\./\.\./evil'"):
        safe_extract(tar, tmp_path / "d2")
    (tmp_path / "not-an-archive").write_text("hello")
    with pytest.raises(DataError, match="neither a zip nor a tar archive"):
        safe_extract(tmp_path / "not-an-archive", tmp_path / "d3")


def test_safe_extract_tar_in_place(tmp_path):
    tar = tmp_path / "collectionandqueries.tar.gz"
    with tarfile.open(tar, "w:gz") as tf:
        info = tarfile.TarInfo("collection.tsv")
        info.size = 8
        tf.addfile(info, io.BytesIO(b"0\thello\n"))
    safe_extract(tar, tmp_path / "out")
    assert (tmp_path / "out" / "collection.tsv").read_text() == "0\thello\n"


def test_load_dataset_dispatches_local_copies(tmp_path):
    assert load_dataset("msmarco", path=write_msmarco(tmp_path / "m")).name == "msmarco"
    assert load_dataset("lf-amazontitles-131k", path=write_xmc(tmp_path / "x"), name="xmc").name == "xmc"
    with pytest.raises(KeyError, match="unknown dataset.source 'imagenet'"):
        load_dataset("imagenet", path=tmp_path)
