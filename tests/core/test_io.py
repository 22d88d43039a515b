import pandas as pd
import pyarrow.parquet as pq
import pytest

from ehi.core.io import atomic_path, read_provenance, read_table, write_table
from ehi.core.schemas import schema


def test_write_table_casts_to_schema_and_records_provenance(tmp_path):
    df = pd.DataFrame({"query_id": [1, 2], "doc_id": ["a", "b"], "relevance": [1, 2], "split": ["test", "test"]})
    path = write_table(df, "qrels", tmp_path / "qrels.parquet", meta={"seed": 3})
    assert pq.read_schema(path).remove_metadata().equals(schema("qrels"))
    assert read_table(path, "qrels").query_id.tolist() == ["1", "2"]
    info = read_provenance(path)
    assert info["seed"] == 3 and info["kind"] == "qrels" and "versions" in info


def test_missing_column_is_named_and_nothing_written(tmp_path):
    df = pd.DataFrame({"query_id": ["q"], "doc_id": ["d"]})
    with pytest.raises(ValueError, match="relevance"):
        write_table(df, "qrels", tmp_path / "qrels.parquet")
    assert list(tmp_path.iterdir()) == []


def test_atomic_path_keeps_the_old_file_when_the_writer_fails(tmp_path):
    target = tmp_path / "x.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("killed")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["x.txt"]


def test_disk_full_leaves_nothing_half_written(tmp_path, monkeypatch):
    """A write that fails with ENOSPC (simulated) leaves neither the target nor a temp file."""
    import errno

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pq, "write_table", full)
    df = pd.DataFrame({"doc_id": ["d"], "title": [""], "text": ["t"]})
    with pytest.raises(OSError, match="No space"):
        write_table(df, "corpus", tmp_path / "corpus.parquet")
    assert list(tmp_path.iterdir()) == []


def test_unknown_kind():
    with pytest.raises(KeyError, match="unknown table kind"):
        schema("nope")


def test_written_files_and_directories_are_readable_by_others(tmp_path):
    import os
    import stat

    import numpy as np
    from safetensors.numpy import save_file

    from ehi.core.io import atomic_dir

    old = os.umask(0o022)
    try:
        with atomic_path(tmp_path / "f.txt") as tmp:
            tmp.write_text("x")
        with atomic_path(tmp_path / "w.safetensors") as tmp:
            save_file({"w": np.zeros(2)}, str(tmp))
        with atomic_dir(tmp_path / "d") as tmp:
            (tmp / "inner.txt").write_text("y")
            (tmp / "sub").mkdir()
            save_file({"w": np.zeros(2)}, str(tmp / "sub" / "index.safetensors"))  # safetensors writes 0600
    finally:
        os.umask(old)
    for f in ("f.txt", "w.safetensors", "d/inner.txt", "d/sub/index.safetensors"):
        assert stat.S_IMODE((tmp_path / f).stat().st_mode) == 0o644, f
    for d in ("d", "d/sub"):
        assert stat.S_IMODE((tmp_path / d).stat().st_mode) == 0o755, d


def test_atomic_dir_puts_back_a_directory_a_kill_left_aside_before_a_failing_write(tmp_path):
    from ehi.core.io import atomic_dir

    aside = tmp_path / ".d.old"  # a kill between atomic_dir's two renames leaves the old one here
    aside.mkdir()
    (aside / "x.txt").write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_dir(tmp_path / "d") as tmp:
            (tmp / "x.txt").write_text("half")
            raise RuntimeError("killed")
    assert (tmp_path / "d" / "x.txt").read_text() == "old" and not aside.exists()
