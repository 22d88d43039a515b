"""Every download path without the internet: each source's published files, in their exact
formats, served from 127.0.0.1 (tests/data/served.py) through ``EHI_SOURCE_OVERRIDES``; checksums,
the trust-on-first-use record, HTML in place of an archive, a second fetch that asks for nothing,
and the one-line errors of a host that cannot be reached."""

import hashlib
import json
import socket
import time

import pytest

from ehi.core.errors import UserError
from ehi.data import download as dl
from ehi.data.prepare import prepare_dataset
from ehi.data.download import DownloadError
from ehi.data.sources import BEIR_PARSER, SOURCES, Remote, Source
from tests.data import source_fixtures as fx
from tests.data.served import serve, write_overrides

# source -> (fixture files, documents, queries per split) of the served copy
SERVED = {
    "scifact": (fx.beir_zip("scifact"), 40, {"train": 20, "test": 8}),
    "msmarco": (fx.msmarco(), 60, {"train": 30, "dev": 10, "test": 5}),
    "nq320k": (fx.nq320k(), 30, {"train": 20, "test": 6}),
    "lf-amazontitles-131k": (fx.lf_amazontitles(), 25, {"train": 20, "test": 6}),
}


def toy_source(url: str, **remote) -> Source:
    return Source("toy", BEIR_PARSER, "a BEIR directory", "corpus.jsonl", (Remote(url, "toy.zip", extract=True, **remote),))


@pytest.mark.parametrize("name", SERVED)
def test_each_source_downloads_verifies_prepares_and_then_asks_for_nothing(tmp_path, monkeypatch, name):
    files, n_docs, per_split = SERVED[name]
    with serve(files) as served:
        monkeypatch.setenv(dl.OVERRIDES_ENV, str(write_overrides(tmp_path / "o.json", served.overrides(name))))
        start = time.monotonic()
        ds = prepare_dataset(name, name, cache_dir=tmp_path / "cache")
        took = time.monotonic() - start
        # each published file once, but one an archive before it already unpacked (MS MARCO's qrels.train.tsv)
        asked = served.requests
        assert len(set(asked)) == len(asked) and set(asked) <= set(files) and len(asked) >= len(files) - 1
        assert len(ds.corpus) == n_docs and ds.queries.split.value_counts().to_dict() == per_split
        recorded = json.loads((tmp_path / "cache" / name / "checksums.json").read_text())
        assert recorded == {f: hashlib.sha256(files[f]).hexdigest() for f in asked}
        again = prepare_dataset(name, name, cache_dir=tmp_path / "cache")
        assert len(served.requests) == len(asked) and again.corpus.equals(ds.corpus)
    sizes = {f: len(b) for f, b in files.items()}
    print(f"{name}: served {sizes} ({sum(sizes.values())} bytes), prepared in {took:.2f} s")


def test_a_wrong_md5_is_refused_and_nothing_is_kept(tmp_path):
    files = fx.beir_zip("toy")
    with serve(files) as served:
        bad = toy_source(served.url + "toy.zip", md5="0" * 32)
        with pytest.raises(DownloadError, match=r"^toy: toy\.zip from http://127\.0\.0\.1:\d+/toy\.zip: .*0{32}"):
            bad.fetch(tmp_path / "cache")
        assert len(served.requests) == 1 + dl.RETRIES  # pooch retried before giving up
    assert not list((tmp_path / "cache").rglob("toy.zip"))


def test_first_download_records_sha256_and_later_ones_check_it(tmp_path):
    with serve(fx.beir_zip("toy")) as served:
        toy = toy_source(served.url + "toy.zip")
        assert len(toy.load_local(toy.fetch(tmp_path / "cache")).corpus) == 40
        record = tmp_path / "cache" / "toy" / "checksums.json"
        assert json.loads(record.read_text()) == {"toy.zip": hashlib.sha256(served.files["toy.zip"]).hexdigest()}
        (tmp_path / "cache" / "toy" / "downloads" / "toy.zip").unlink()
        served.files["toy.zip"] += b"changed upstream"
        with pytest.raises(DownloadError, match=rf"toy\.zip .*changed upstream \(delete {record} to accept"):
            toy.fetch(tmp_path / "cache")


def test_an_html_page_instead_of_the_archive_is_refused(tmp_path):
    with serve({"t.zip": b"<!DOCTYPE html><html>quota exceeded</html>"}, content_type="text/html") as served:
        toy = Source("toy", BEIR_PARSER, "", "corpus.jsonl", (Remote(served.url + "t.zip", "t.zip", extract=True),))
        with pytest.raises(DownloadError, match=r"^toy: http://.*/t\.zip served an HTML page instead of t\.zip"):
            toy.fetch(tmp_path / "cache")
    assert not (tmp_path / "cache" / "toy" / "checksums.json").exists()  # nothing recorded as trusted
    assert not list((tmp_path / "cache").rglob("t.zip"))


def test_every_source_fails_in_one_line_when_its_host_is_unreachable(tmp_path, monkeypatch):
    with socket.socket() as s:  # a port nobody listens on: what an offline machine sees, at once
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/"
    table = {name: {r.filename: {"url": dead + r.filename} for r in src.remotes} for name, src in SOURCES.items()}
    monkeypatch.setenv(dl.OVERRIDES_ENV, str(write_overrides(tmp_path / "o.json", table)))
    for name, source in SOURCES.items():
        start = time.monotonic()
        with pytest.raises(UserError, match=rf"^{name}: .*dataset\.path: /path/to/{name}") as err:
            source.fetch(tmp_path / "cache")
        assert "\n" not in str(err.value) and time.monotonic() - start < 15
        if source.remotes:
            assert dead in str(err.value)


def test_an_override_naming_a_file_the_source_lacks_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv(dl.OVERRIDES_ENV, str(write_overrides(tmp_path / "o.json", {"scifact": {"sci.zip": {}}})))
    with pytest.raises(DownloadError, match=r"source 'scifact' publishes no file \['sci\.zip'\]; its files: \['scifact\.zip'\]"):
        SOURCES["scifact"].fetch(tmp_path / "cache")


def _fetched(source: Source, cache_dir):
    """The source's dataset as a preparation reads it: fetched (or found in the cache), then parsed."""
    return source.load_local(source.fetch(cache_dir))


def _md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def test_a_cached_archive_is_checked_against_the_current_md5_and_fetched_again(tmp_path):
    """The source's md5 changed (a new version, or an EHI_SOURCE_OVERRIDES entry): the cached
    archive is no longer used; the new one is fetched, unpacked again and recorded."""
    old, new = fx.beir_zip("toy")["toy.zip"], fx.beir_zip("toy", n_docs=30)["toy.zip"]
    with serve({"toy.zip": old}) as served:
        url = served.url + "toy.zip"
        assert len(_fetched(toy_source(url, md5=_md5(old)), tmp_path / "cache").corpus) == 40
        assert len(_fetched(toy_source(url, md5=_md5(old)), tmp_path / "cache").corpus) == 40
        assert len(served.requests) == 1  # a matching cached copy asks for nothing
        served.files["toy.zip"] = new
        assert len(_fetched(toy_source(url, md5=_md5(new)), tmp_path / "cache").corpus) == 30
        assert len(served.requests) == 2
    record = json.loads((tmp_path / "cache" / "toy" / "checksums.json").read_text())
    assert record == {"toy.zip": hashlib.sha256(new).hexdigest()}


def test_a_cached_copy_that_no_longer_matches_its_record_is_fetched_again(tmp_path, caplog):
    data = fx.beir_zip("toy")["toy.zip"]
    with serve({"toy.zip": data}) as served:
        toy = toy_source(served.url + "toy.zip")  # no published checksum: the first download's sha256
        toy.fetch(tmp_path / "cache")
        cached = tmp_path / "cache" / "toy" / "downloads" / "toy.zip"
        cached.write_bytes(data[:-10] + b"0123456789")  # changed on disk after it was recorded
        toy.fetch(tmp_path / "cache")
        assert len(served.requests) == 2 and cached.read_bytes() == data
    assert f"the cached {cached} does not match the source's current sha256" in caplog.text


def test_an_archive_that_does_not_unpack_leaves_the_cache_and_the_fixed_mirror_is_used(tmp_path):
    good = fx.beir_zip("toy")["toy.zip"]
    broken = bytearray(good)
    broken[len(good) // 3 : len(good) // 3 + 64] = bytes(64)  # a member's data damaged, the zip index intact
    with serve({"toy.zip": bytes(broken)}) as served:
        toy = toy_source(served.url + "toy.zip")
        with pytest.raises(DownloadError, match=r"toy\.zip: does not unpack .*removed from the cache with its "
                                                r"recorded checksum: run again to download it again"):
            toy.fetch(tmp_path / "cache")
        assert not (tmp_path / "cache" / "toy" / "downloads" / "toy.zip").exists()
        assert json.loads((tmp_path / "cache" / "toy" / "checksums.json").read_text()) == {}
        served.files["toy.zip"] = good  # the mirror fixed: fetched and trusted anew, no "changed upstream"
        assert len(_fetched(toy, tmp_path / "cache").corpus) == 40


def test_a_file_url_is_refused_as_such_not_as_a_corrupt_download(tmp_path):
    (tmp_path / "toy.zip").write_bytes(fx.beir_zip("toy")["toy.zip"])
    with pytest.raises(DownloadError, match=r"^toy: file://.*toy\.zip: only http\(s\) URLs are downloaded; for a file "
                                            r"on this machine, put it at .*downloads/toy\.zip"):
        toy_source((tmp_path / "toy.zip").as_uri()).fetch(tmp_path / "cache")


def test_a_new_archive_version_replaces_the_old_ones_files_and_keeps_none_it_lacks(tmp_path):
    """Version 1 ships a dev split and version 2 does not: the old qrels/dev.tsv must not become
    the new data's dev split. A second fetch of the same version unpacks nothing."""
    old = fx.beir_zip("toy", splits=(("train", 20), ("dev", 4), ("test", 8)))["toy.zip"]
    new = fx.beir_zip("toy", n_docs=30)["toy.zip"]
    root = tmp_path / "cache" / "toy"
    with serve({"toy.zip": old}) as served:
        url = served.url + "toy.zip"
        first = _fetched(toy_source(url, md5=_md5(old)), tmp_path / "cache")
        assert set(first.queries.split) == {"train", "dev", "test"}
        unpacked = (root / "toy" / "corpus.jsonl").stat().st_mtime_ns
        _fetched(toy_source(url, md5=_md5(old)), tmp_path / "cache")
        assert (root / "toy" / "corpus.jsonl").stat().st_mtime_ns == unpacked  # the same version: left alone
        served.files["toy.zip"] = new
        second = _fetched(toy_source(url, md5=_md5(new)), tmp_path / "cache")
    assert len(second.corpus) == 30 and set(second.queries.split) == {"train", "test"}
    assert not (root / "toy" / "qrels" / "dev.tsv").exists()


def test_an_archive_that_does_not_unpack_leaves_the_previous_version_in_place(tmp_path):
    good = fx.beir_zip("toy")["toy.zip"]
    broken = bytearray(fx.beir_zip("toy", n_docs=30)["toy.zip"])
    broken[len(broken) // 3: len(broken) // 3 + 64] = bytes(64)
    with serve({"toy.zip": good}) as served:
        url = served.url + "toy.zip"
        _fetched(toy_source(url, md5=_md5(good)), tmp_path / "cache")
        corpus = tmp_path / "cache" / "toy" / "toy" / "corpus.jsonl"
        before = corpus.read_bytes()
        served.files["toy.zip"] = bytes(broken)
        with pytest.raises(DownloadError, match="does not unpack"):
            toy_source(url, md5=_md5(bytes(broken))).fetch(tmp_path / "cache")
    assert corpus.read_bytes() == before
    assert not list((tmp_path / "cache" / "toy" / "downloads").glob(".*unpacking"))
