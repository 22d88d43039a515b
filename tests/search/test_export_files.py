"""An export's files belong together: FILE.json's checksums tie it to FILE, the router file and the
id map, so a swapped, reordered or edited file is refused naming it, never served with wrong ids."""

import json
import shutil

import pytest

from ehi.search.export_files import FORMAT_VERSION, ExportError, meta_path, router_path, sidecar_digest
from ehi.search.exported import ExportedIndex, load_export
from tests.search.test_export import _index


@pytest.fixture()
def exports(tmp_path):
    index, _ = _index(2, 3, n_docs=100)
    ids = [f"d{i}" for i in range(index.n_docs)]
    other, _ = _index(2, 3, n_docs=100, seed=1)
    return (ExportedIndex.build(index, doc_ids=ids).write(tmp_path / "x.faiss"),
            ExportedIndex.build(other, doc_ids=ids).write(tmp_path / "other.faiss"))


def _rewrite_meta(path, change, resign=False):
    meta = json.loads(meta_path(path).read_text())
    change(meta)
    if resign:  # as if the sidecar had been edited with its own checksum recomputed
        meta["checksums"]["sidecar"] = sidecar_digest(meta)
    meta_path(path).write_text(json.dumps(meta))


def _reverse_ids(meta):
    meta["doc_ids"] = meta["doc_ids"][::-1]


def _height_one(meta):
    meta["height"] = 1


CASES = [
    ("another export's FAISS file", lambda x, o: shutil.copyfile(o, x), r"x\.faiss: not the FAISS file x\.faiss\.json"),
    ("another export's sidecar", lambda x, o: shutil.copyfile(meta_path(o), meta_path(x)), r"x\.faiss: not the FAISS file"),
    ("another export's router", lambda x, o: shutil.copyfile(router_path(o), router_path(x)), r"router\.safetensors: not the router"),
    ("a reordered id map", lambda x, o: _rewrite_meta(x, _reverse_ids), r"x\.faiss\.json: changed after export"),
    ("a reordered id map, sidecar re-signed", lambda x, o: _rewrite_meta(x, _reverse_ids, resign=True),
     r"x\.faiss\.json: the id map differs"),
    ("a wrong height", lambda x, o: _rewrite_meta(x, _height_one), r"x\.faiss\.json: changed after export"),
    ("an export of the previous format", lambda x, o: _rewrite_meta(x, lambda m: m.update(format_version=1)),
     rf"format 'ehi-faiss-export' v1, expected 'ehi-faiss-export' v{FORMAT_VERSION}"),
    ("no checksums", lambda x, o: _rewrite_meta(x, lambda m: m.pop("checksums")), r"x\.faiss\.json: missing checksums"),
    ("a truncated router", lambda x, o: router_path(x).write_bytes(router_path(x).read_bytes()[:100]),
     r"x\.faiss\.router\.safetensors: not a readable router file"),
]


@pytest.mark.parametrize("what, damage, message", CASES, ids=[c[0] for c in CASES])
def test_files_that_do_not_belong_together_are_refused(exports, what, damage, message):
    damage(*exports)
    with pytest.raises(ExportError, match=message) as err:
        load_export(exports[0])
    assert "\n" not in str(err.value)


def test_a_sound_export_passes_and_writes_no_temporary_files(exports, tmp_path):
    assert load_export(exports[0]).doc_ids[:2] == ["d0", "d1"]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_a_directory_as_the_output_is_refused_before_writing(exports, tmp_path):
    index, _ = _index(1, 4, n_docs=50)
    (tmp_path / "taken").mkdir()
    with pytest.raises(ExportError, match="taken: is a directory"):
        ExportedIndex.build(index).write(tmp_path / "taken")
    assert list((tmp_path / "taken").iterdir()) == []
