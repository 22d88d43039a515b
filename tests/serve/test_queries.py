"""`ehi search` checks a query file whole before printing anything, writes --out whole or not at
all, and refuses a device the machine lacks before loading anything."""

import io
import sys

import pytest

from ehi.serve.cli import main
from tests.serve.test_api_cli import QUERIES, built  # noqa: F401 (the module's tiny index, a fixture)


def search(built, *args):  # noqa: F811
    return main(["search", "--index", str(built["dir"]), "--beam", "2", "-k", "3", "--device", "cpu", *args])


def refused(capsys, built, *args) -> str:  # noqa: F811
    with pytest.raises(SystemExit) as exc:
        search(built, *args)
    out = capsys.readouterr()
    assert out.out == "" and "Traceback" not in out.err  # nothing printed: no header, no finished batch
    return str(exc.value.code)


def test_a_decoding_error_mid_file_stops_before_the_first_result(built, capsys, tmp_path):  # noqa: F811
    path = tmp_path / "queries.txt"
    path.write_bytes("\n".join(QUERIES).encode() + b"\nbad \xff byte\nlast query\n")  # line 5 is not UTF-8
    said = refused(capsys, built, "--queries-file", str(path), "--batch-size", "1")
    assert said == f"ehi search: error: {path}, line 5: not UTF-8 (invalid start byte at byte 4)"


def test_stdin_is_checked_whole_too(built, capsys, monkeypatch):  # noqa: F811
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"river\n\xc3(\n")))
    assert refused(capsys, built, "--queries-file", "-") == "ehi search: error: stdin, line 2: not UTF-8 (invalid continuation byte at byte 0)"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"\xef\xbb\xbfriver castle\n")))  # a BOM is not query text
    assert search(built, "--queries-file", "-") == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("1\t1\t")


def test_a_file_without_queries_is_refused(built, capsys, tmp_path):  # noqa: F811
    path = tmp_path / "blank.txt"
    path.write_text("\n  \n")
    assert refused(capsys, built, "--queries-file", str(path)) == f"ehi search: error: {path}: no queries (every line is blank)"


def test_out_is_written_whole_or_not_at_all(built, capsys, tmp_path):  # noqa: F811
    good, bad = tmp_path / "good.txt", tmp_path / "bad.txt"
    good.write_text("\n".join(QUERIES) + "\n")
    bad.write_bytes(b"river\n\xff\n")
    assert search(built, "--queries-file", str(good)) == 0
    printed = capsys.readouterr().out
    out_dir = tmp_path / "out"
    assert search(built, "--queries-file", str(good), "--out", str(out_dir / "run.tsv")) == 0
    assert capsys.readouterr().out == "" and (out_dir / "run.tsv").read_text() == printed
    refused(capsys, built, "--queries-file", str(bad), "--out", str(out_dir / "failed.tsv"))
    assert sorted(p.name for p in out_dir.iterdir()) == ["run.tsv"]  # no partial file, no temporary left


@pytest.mark.parametrize("device, said", [("gpu", "device 'gpu' is not a device name"),
                                          ("cuda", "device 'cuda': CUDA is not available here")])
def test_a_device_this_machine_lacks_is_refused_before_loading(built, capsys, monkeypatch, device, said):  # noqa: F811
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # a CPU build, whatever this machine has
    with pytest.raises(SystemExit) as exc:
        main(["search", "--index", str(built["dir"]), "--query", "river", "--device", device])
    assert str(exc.value.code) == f"ehi search: error: {said}" + (" (no GPU, or a CPU build of torch)" if device == "cuda" else " (auto, cpu, cuda, cuda:0, ...)")
    assert capsys.readouterr().out == ""
