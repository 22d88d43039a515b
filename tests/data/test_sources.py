"""Source parsers on fixture files in each source's real format, safe extraction, and offline downloads.

No test touches the network: ``urllib.request.urlopen`` is replaced by a fake that either refuses
(no network) or serves bytes from memory.
"""

import gzip
import hashlib
import io
import json
import tarfile
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

import pytest

from ehi.data import sources
from ehi.data.beir import load_beir
from ehi.data.sources import (
    SOURCES,
    DownloadError,
    Remote,
    Source,
    load_dataset,
    load_msmarco,
    load_nq320k,
    load_xmc,
    read_msmarco_triples,
    safe_extract,
)
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
    with gzip.open(root / "qidpidtriples.train.full.2.tsv.gz", "wt") as fh:
        fh.write("100\t0\t5\n101\t1\t4\n101\t2\t3\n")
    return root


def test_msmarco_parser(tmp_path, caplog):
    ds = load_msmarco(write_msmarco(tmp_path / "msmarco"))
    assert ds.name == "msmarco" and len(ds.corpus) == 6 and set(ds.corpus.title) == {""}
    assert dict(zip(ds.queries.query_id, ds.queries.split)) == {"100": "train", "101": "train", "200": "dev", "300": "test"}
    test = ds.qrels[ds.qrels.split == "test"]
    assert test[["doc_id", "relevance"]].values.tolist() == [["4", 3], ["5", 0]]
    assert "2 query(ies) without judgements" in caplog.text  # 102 and 301
    triples = read_msmarco_triples(tmp_path / "msmarco" / "qidpidtriples.train.full.2.tsv.gz", limit=2)
    assert triples.values.tolist() == [["100", "0", "5"], ["101", "1", "4"]]


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


# ---- downloads without network --------------------------------------------------------------------


def test_every_download_fails_fast_offline(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    for name, source in SOURCES.items():
        start = time.monotonic()
        with pytest.raises(DownloadError, match=rf"^{name}: .*dataset\.path: /path/to/{name}"):
            source.fetch(tmp_path / "cache")
        assert time.monotonic() - start < 15
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*.zip"))


def zipped_beir(tmp_path: Path) -> bytes:
    """A BEIR archive as published: everything under one ``<name>/`` folder."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("toy/corpus.jsonl", "".join(json.dumps({"_id": f"d{i}", "title": "", "text": f"doc {i}"}) + "\n" for i in range(5)))
        zf.writestr("toy/queries.jsonl", '{"_id": "q0", "text": "query zero"}\n')
        zf.writestr("toy/qrels/test.tsv", "query-id\tcorpus-id\tscore\nq0\td3\t1\n")
    return buf.getvalue()


def serve(monkeypatch, payload: bytes, calls: list):
    def fake_urlopen(request, timeout=None):
        calls.append((request.full_url, timeout))
        return io.BytesIO(payload)

    monkeypatch.setattr(urllib.request, "urlopen", fake_urlopen)


def test_download_verifies_md5_then_extracts_and_loads(tmp_path, monkeypatch):
    payload, calls = zipped_beir(tmp_path), []
    serve(monkeypatch, payload, calls)
    remote = Remote("https://example.invalid/toy.zip", "toy.zip", md5=hashlib.md5(payload).hexdigest(), extract=True)
    toy = Source("toy", load_beir, sources.BEIR_LAYOUT, "corpus.jsonl", (remote,))
    ds = toy.load(tmp_path / "cache")
    assert ds.name == "toy" and len(ds.corpus) == 5
    assert calls == [("https://example.invalid/toy.zip", sources.TIMEOUT_S)]
    toy.load(tmp_path / "cache")  # cached: no second request
    assert len(calls) == 1
    bad = Source("bad", load_beir, sources.BEIR_LAYOUT, "corpus.jsonl", (Remote(remote.url, "toy.zip", md5="0" * 32, extract=True),))
    with pytest.raises(DownloadError, match=r"bad: .*toy\.zip has md5 [0-9a-f]{32}, expected 0{32}"):
        bad.fetch(tmp_path / "cache")
    assert not (tmp_path / "cache" / "bad" / "downloads" / "toy.zip").exists()


def test_download_records_sha256_and_checks_it_later(tmp_path, monkeypatch):
    payload, calls = zipped_beir(tmp_path), []
    serve(monkeypatch, payload, calls)
    toy = Source("toy", load_beir, sources.BEIR_LAYOUT, "corpus.jsonl", (Remote("https://example.invalid/toy.zip", "toy.zip", extract=True),))
    toy.fetch(tmp_path / "cache")
    manifest = json.loads((tmp_path / "cache" / "toy" / "checksums.json").read_text())
    assert manifest == {"toy.zip": hashlib.sha256(payload).hexdigest()}
    (tmp_path / "cache" / "toy" / "downloads" / "toy.zip").unlink()
    serve(monkeypatch, payload + b"changed upstream", calls)
    with pytest.raises(DownloadError, match=r"toy\.zip has sha256 .*, expected .*changed upstream"):
        toy.fetch(tmp_path / "cache")


def test_html_page_instead_of_archive_is_refused(tmp_path, monkeypatch):
    serve(monkeypatch, b"<html>quota exceeded</html>", [])
    toy = Source("toy", load_beir, sources.BEIR_LAYOUT, "corpus.jsonl", (Remote("https://example.invalid/t.zip", "t.zip", extract=True),))
    with pytest.raises(DownloadError, match=r"toy: .* served no archive instead of t\.zip; download it by hand"):
        toy.fetch(tmp_path / "cache")
    assert not (tmp_path / "cache" / "toy" / "checksums.json").exists()  # nothing recorded as trusted


def test_load_dataset_dispatches_local_copies(tmp_path):
    assert load_dataset("msmarco", path=write_msmarco(tmp_path / "m")).name == "msmarco"
    assert load_dataset("lf-amazontitles-131k", path=write_xmc(tmp_path / "x"), name="xmc").name == "xmc"
    with pytest.raises(KeyError, match="unknown dataset.source 'imagenet'"):
        load_dataset("imagenet", path=tmp_path)
