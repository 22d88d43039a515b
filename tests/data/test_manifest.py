"""The per-dataset manifest: written by preparation, checked before every run, so that a changed
source copy or prepared table is named instead of silently mixed into results."""

import json
import os

import numpy as np
import pytest

from ehi.data.manifest import check_manifest, write_manifest
from ehi.data.prepare import prepare_dataset
from ehi.data.validate import DataError
from tests.data.test_beir import write_beir


@pytest.fixture()
def prepared(tmp_path):
    """A small local BEIR copy prepared into tmp_path/data."""
    source = write_beir(tmp_path / "copy")
    cfg = {"name": "small", "source": "beir", "path": str(source), "dev_fraction": 0.0, "dev_seed": 0}
    dataset = prepare_dataset("small", "beir", path=str(source))
    dataset.write(tmp_path / "data")
    write_manifest(cfg, tmp_path / "data", dataset.queries.split.value_counts().to_dict())
    return source, tmp_path / "data"


def test_manifest_records_source_split_and_sha256_of_each_file(prepared):
    source, data = prepared
    manifest = json.loads((data / "manifest.json").read_text())
    assert manifest["config"]["source"] == "beir" and manifest["ehi_version"]
    assert str(source / "corpus.jsonl") in manifest["source_files"]
    assert set(manifest["tables"]) == {"corpus.parquet", "queries.parquet", "qrels.parquet"}
    assert all(len(r["sha256"]) == 64 for r in [*manifest["source_files"].values(), *manifest["tables"].values()])
    assert sum(manifest["queries_per_split"].values()) > 0
    assert check_manifest(data) == manifest  # unchanged: passes


def test_manifest_changed_source_copy_is_named(prepared):
    source, data = prepared
    corpus = source / "corpus.jsonl"
    st = corpus.stat()
    corpus.write_text(corpus.read_text().replace("doc", "dog", 1))
    os.utime(corpus, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # an edit a second later
    with pytest.raises(DataError, match=rf"changed since it was prepared.*source file {corpus}: sha256"):
        check_manifest(data)


def test_manifest_touched_but_identical_file_passes_and_edited_table_fails(prepared):
    source, data = prepared
    os.utime(source / "corpus.jsonl", ns=(1, 1))  # new mtime, same bytes: hashed, still the same
    assert check_manifest(data) is not None
    table = data / "qrels.parquet"
    table.write_bytes(table.read_bytes() + b"\0")
    with pytest.raises(DataError, match=r"prepared table .*qrels.parquet"):
        check_manifest(data)
    (source / "queries.jsonl").unlink()
    with pytest.raises(DataError, match=r"queries.jsonl: missing"):
        check_manifest(data)


def _broken(manifest: dict, case: str):
    """The manifest with one structural fault (an edit, a truncation, another tool's file)."""
    broken = json.loads(json.dumps(manifest))
    table = next(iter(broken["tables"]))
    if case == "no source_files":
        del broken["source_files"]
    elif case == "source_files a list":
        broken["source_files"] = list(broken["source_files"])
    elif case == "a record a number":
        broken["tables"][table] = 5
    elif case == "a record without bytes":
        del broken["tables"][table]["bytes"]
    elif case == "a table missing":
        del broken["tables"][table]
    elif case == "queries_per_split a list":
        broken["queries_per_split"] = [1, 2]
    elif case == "config a string":
        broken["config"] = "beir"
    return broken


BROKEN = ["no source_files", "source_files a list", "a record a number", "a record without bytes", "a table missing",
          "queries_per_split a list", "config a string"]


@pytest.mark.parametrize("case", BROKEN)
def test_a_structurally_broken_manifest_is_one_line_naming_the_file(prepared, case):
    _, data = prepared
    path = data / "manifest.json"
    path.write_text(json.dumps(_broken(json.loads(path.read_text()), case)))
    with pytest.raises(DataError) as exc:
        check_manifest(data)
    message = str(exc.value)
    assert message.startswith(f"{path}: ") and "\n" not in message and f"delete {path}" in message


@pytest.mark.parametrize("text", ["[]", "{", "7"])
def test_a_manifest_that_is_no_json_object_is_named(prepared, text):
    _, data = prepared
    (data / "manifest.json").write_text(text)
    with pytest.raises(DataError, match=rf"^{data / 'manifest.json'}: "):
        check_manifest(data)


def test_a_new_published_checksum_of_a_downloaded_archive_is_named_though_no_cached_file_changed(prepared, tmp_path,
                                                                                                  monkeypatch):
    """The archive scifact.zip still cached as prepared, but the source now publishes another version
    (here through EHI_SOURCE_OVERRIDES, as a mirror of a new release would be named)."""
    _, data = prepared
    cfg = {"name": "scifact", "source": "scifact", "cache_dir": str(tmp_path / "downloads"), "dev_fraction": 0.2,
           "dev_seed": 0}
    write_manifest(cfg, data, {"test": 1})
    recorded = json.loads((data / "manifest.json").read_text())["source_checksums"]
    assert list(recorded) == ["scifact.zip"] and recorded["scifact.zip"].startswith("md5:")
    assert check_manifest(data)["source_checksums"] == recorded  # published as prepared: passes
    overrides = tmp_path / "overrides.json"
    overrides.write_text(json.dumps({"scifact": {"scifact.zip": {"md5": "0" * 32}}}))
    monkeypatch.setenv("EHI_SOURCE_OVERRIDES", str(overrides))
    with pytest.raises(DataError, match=f"source archive scifact.zip: published now as md5:{'0' * 32}, prepared from "
                                        f"{recorded['scifact.zip']}"):
        check_manifest(data)


def test_a_local_copy_records_no_published_checksums(prepared):
    _, data = prepared
    assert "source_checksums" not in json.loads((data / "manifest.json").read_text())


@pytest.mark.parametrize("name", ["corpus.jsonl", "docs.npy"])
def test_an_edit_in_place_that_keeps_size_and_modification_time_is_named(tmp_path, name):
    # the size and the modification time put back (os.utime): only the status-change time tells
    from ehi.data.embeddings import write_ids
    from ehi.data.manifest import build_manifest

    source = tmp_path / "copy"
    source.mkdir()
    np.save(source / "docs.npy", np.eye(4, dtype=np.float32))
    write_ids(source / "corpus.jsonl", ['{"_id": "d1", "title": "", "text": "a document"}'])
    data = tmp_path / "data"
    data.mkdir()
    for table in ("corpus.parquet", "queries.parquet", "qrels.parquet"):
        (data / table).write_bytes(b"table")
    (data / "manifest.json").write_text(json.dumps(build_manifest({"path": str(source)}, data, {"test": 1})))
    assert check_manifest(data) is not None
    edited, st = source / name, (source / name).stat()
    with open(edited, "r+b") as f:  # one byte, in place
        f.seek(st.st_size - 2)
        byte = f.read(1)
        f.seek(st.st_size - 2)
        f.write(bytes([byte[0] ^ 1]))
    os.utime(edited, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert edited.stat().st_size == st.st_size and edited.stat().st_mtime_ns == st.st_mtime_ns
    with pytest.raises(DataError, match=rf"source file {edited}: sha256"):
        check_manifest(data)


def test_published_tables_are_recorded_with_the_status_change_time_they_have_in_place(prepared, tmp_path):
    # a rename moves a file's ctime: recorded as it is after the move, a parse finds them untouched
    from ehi.data.manifest import publish_prepared

    _, staged = prepared
    publish_prepared(staged, tmp_path / "published")
    tables = json.loads((tmp_path / "published" / "manifest.json").read_text())["tables"]
    assert {name: r["ctime_ns"] for name, r in tables.items()} == \
        {name: (tmp_path / "published" / name).stat().st_ctime_ns for name in tables}
