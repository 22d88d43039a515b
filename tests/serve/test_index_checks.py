"""A broken search-index directory fails on opening, for `ehi info` exactly as for `ehi search`:
one line naming the file, exit status 1, no traceback, nothing printed and nothing written."""

import json
import os
import shutil
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from safetensors.torch import load_file, save_file

from ehi.core.errors import SearchIndexError
from ehi.serve.api import load_index
from ehi.serve.cli import main
from tests.serve.test_api_cli import built  # noqa: F401 (the module's tiny index, a fixture)


def _truncate(path):
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _write_json(value):
    return lambda path: path.write_text(json.dumps(value))


def _edit_json(**changes):
    return lambda path: path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


def _edit_tensors(**changes):
    def edit(path):
        tensors = load_file(str(path))
        for name, change in changes.items():
            tensors[name] = change(tensors[name])
        save_file(tensors, str(path))
    return edit


def _add_token(token_id):  # a tokenizer that can emit ids the encoder has no embedding for
    def edit(path):
        spec = json.loads(path.read_text())
        spec["added_tokens"].append({"id": token_id, "content": "[NEW]", "special": True})
        path.write_text(json.dumps(spec))
    return edit


def _rename_tensor(name):
    def edit(path):
        tensors = load_file(str(path))
        tensors[name.rsplit(".", 1)[0] + "." + name.rsplit(".", 1)[1].upper()] = tensors.pop(name)
        save_file(tensors, str(path))
    return edit


def _drop_tensor(name):
    def edit(path):
        tensors = load_file(str(path))
        del tensors[name]
        save_file(tensors, str(path))
    return edit


def _drop_vocab_over(size):  # a vocabulary cut below its unknown token's id (100 < size keeps it: drop it too)
    def edit(path):
        spec = json.loads(path.read_text())
        spec["model"]["vocab"] = {t: i for t, i in spec["model"]["vocab"].items() if i < size and t != "[UNK]"}
        path.write_text(json.dumps(spec))
    return edit


def _edit_doc_ids(change, kind=pa.string()):
    def edit(path):
        table = pq.read_table(path)
        ids = change(table.column("doc_id").to_pylist())
        pq.write_table(table.set_column(0, "doc_id", pa.array(ids, kind)), path)
    return edit


def _scale_tensors(factor, only=lambda name: True):
    def edit(path):
        tensors = load_file(str(path))
        save_file({k: v * factor if only(k) else v for k, v in tensors.items()}, str(path))
    return edit


# (what is broken, file, how, what the message says)
BROKEN = [
    ("truncated tree weights", "index/indexer.safetensors", _truncate, "indexer.safetensors: not a readable safetensors"),
    ("truncated encoder weights", "encoder/model.safetensors", _truncate, "model.safetensors: not a readable safetensors"),
    ("garbage config.json", "config.json", lambda p: p.write_bytes(b"\x00garbage{"), "config.json: not a readable JSON"),
    ("a JSON list in config.json", "config.json", _write_json([1, 2]), "config.json: expected a JSON object, got list"),
    ("a JSON list in index.json", "index/index.json", _write_json(["x"]), "index.json: expected a JSON object, got list"),
    ("garbage indexer.json", "index/indexer.json", lambda p: p.write_text("{'dim': "), "indexer.json: not a readable JSON"),
    ("an unknown key in indexer.json", "index/indexer.json", _edit_json(depth=3), "indexer.json: not a tree configuration"),
    ("another search-index format", "config.json", _edit_json(format_version=99), "search-index format 99, expected 1"),
    ("another index format", "index/index.json", _edit_json(format_version=1),
     "index format 1, this ehi reads format 2 (the documents stored once, in index.faiss); build the index again"),
    ("missing FAISS file", "index/index.faiss", os.remove, "index.faiss: missing (the index's documents and leaves)"),
    ("truncated FAISS file", "index/index.faiss", _truncate, "index.faiss: not a readable FAISS index"),
    ("an edited export sidecar", "index/index.faiss.json", _edit_json(note="edited"), "index.faiss.json: changed after export"),
    ("an id map of another length", "index/index.faiss.json", _edit_json(doc_ids=["0"]), "index.faiss: 40 vectors, but"),
    ("a tree of another shape", "index/indexer.json", _edit_json(branching=3), "another model configuration"),
    ("truncated docs.parquet", "docs.parquet", _truncate, "docs.parquet: not a readable document table"),
    ("missing tokenizer", "encoder/tokenizer.json", os.remove, "tokenizer files missing"),
    ("a tokenizer of a larger vocabulary", "encoder/tokenizer.json", _add_token(40000),
     "tokenizer.json: token ids up to 40000, but the encoder's vocabulary has 30522 entries"),
    ("an encoder of another dimension", "encoder/config.json", _edit_json(hidden_size=64),
     "the encoder embeds in 64 dimensions, the index in 32"),
    ("encoder weights of another vocabulary", "encoder/model.safetensors",
     _edit_tensors(**{"embeddings.word_embeddings.weight": lambda w: w[:1000].clone()}),
     "embeddings.word_embeddings.weight: saved (1000, 32), model expects (30522, 32)"),
    ("a renamed encoder tensor", "encoder/model.safetensors", _rename_tensor("encoder.layer.0.output.dense.bias"),
     "model.safetensors does not match config.json (the model would run with random tensors): "
     "encoder.layer.0.output.dense.bias: missing from the file; encoder.layer.0.output.dense.BIAS: not in the model"),
    ("a dropped encoder tensor", "encoder/model.safetensors", _drop_tensor("encoder.layer.1.output.dense.weight"),
     "encoder.layer.1.output.dense.weight: missing from the file"),
    ("an encoder config naming an extra layer", "encoder/config.json", _edit_json(num_hidden_layers=3),
     "encoder.layer.2.attention.output.LayerNorm.bias: missing from the file"),
    ("an encoder tensor of another shape", "encoder/model.safetensors",
     _edit_tensors(**{"encoder.layer.0.attention.self.query.weight": lambda w: w[:, :16].clone()}),
     "encoder.layer.0.attention.self.query.weight: saved (32, 16), model expects (32, 32)"),
    ("a bogus model_type", "encoder/config.json", _edit_json(model_type="nonsense"),
     "encoder/config.json: not an encoder configuration transformers can build"),
    ("a tokenizer without its unknown token", "encoder/tokenizer.json", _drop_vocab_over(1000),
     "the saved tokenizer fails on a plain text"),
    ("an inf router weight", "index/indexer.safetensors", _edit_tensors(**{"U.0.weight": lambda w: w + float("inf")}),
     "indexer.safetensors: NaN or inf in U.0.weight"),
    ("an encoder of NaNs", "encoder/model.safetensors", _scale_tensors(float("nan")),
     "model.safetensors: NaN or inf in "),
    ("one encoder tensor of NaNs", "encoder/model.safetensors",
     _scale_tensors(float("nan"), lambda k: k == "encoder.layer.1.output.dense.weight"),
     "NaN or inf in encoder.layer.1.output.dense.weight (2048 of 2048 values)"),
    ("every LayerNorm of inf", "encoder/model.safetensors", _scale_tensors(float("inf"), lambda k: "LayerNorm" in k),
     "NaN or inf in embeddings.LayerNorm.bias"),
    ("router weights x1e38 (finite, overflowing)", "index/indexer.safetensors", _scale_tensors(1e38),
     "indexer.safetensors: routing weights "),
    ("a null doc id", "docs.parquet", _edit_doc_ids(lambda ids: [None] + ids[1:]), "docs.parquet: 1 empty or null doc_id(s), first at row 0"),
    ("an empty doc id", "docs.parquet", _edit_doc_ids(lambda ids: ids[:5] + [" "] + ids[6:]), "first at row 5"),
    ("integer doc ids", "docs.parquet", _edit_doc_ids(lambda ids: list(range(len(ids))), pa.int64()),
     "docs.parquet: column doc_id is int64, save_search_index writes strings"),
    ("duplicate doc ids", "docs.parquet", _edit_doc_ids(lambda ids: ids[:1] * 2 + ids[2:]),
     "docs.parquet: doc_id 'd00' appears 2 times; document ids must be unique"),
]


def _snapshot(root):
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in sorted(root.rglob("*"))}


@pytest.mark.parametrize("what, name, breaks, message", BROKEN, ids=[b[0] for b in BROKEN])
def test_info_and_search_refuse_a_broken_index_alike(built, tmp_path, capsys, what, name, breaks, message):  # noqa: F811
    index_dir = tmp_path / "index"
    shutil.copytree(built["dir"], index_dir)
    breaks(index_dir / name)
    before = _snapshot(tmp_path)
    with pytest.raises((SearchIndexError, ValueError)):  # the API raises; WeightsError is a sibling
        load_index(index_dir)
    for argv in (["info"], ["search", "--query", "river", "--device", "cpu"]):
        with pytest.raises(SystemExit) as exc:
            main([argv[0], "--index", str(index_dir), *argv[1:]])
        said = str(exc.value.code)
        assert said.startswith(f"ehi {argv[0]}: error: ") and message in said and "\n" not in said, said
        out = capsys.readouterr()
        assert out.out == "" and "Traceback" not in out.err
    assert _snapshot(tmp_path) == before  # opening writes nothing


def test_the_command_prints_one_line_and_exits_1_without_a_traceback(built, tmp_path):  # noqa: F811
    index_dir = tmp_path / "index"
    shutil.copytree(built["dir"], index_dir)
    (index_dir / "encoder" / "tokenizer.json").unlink()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("EHI_DEBUG", None)
    proc = subprocess.run([sys.executable, "-m", "ehi.serve.cli", "info", "--index", str(index_dir)],
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [f"ehi info: error: {index_dir / 'encoder'}: tokenizer files missing "
                                                "(need one of tokenizer.json, vocab.txt); save the encoder with "
                                                "Encoder.save, which writes them"]
    proc = subprocess.run([sys.executable, "-m", "ehi.serve.cli", "info", "--index", str(index_dir), "--verbose"],
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 1 and "Traceback (most recent call last)" in proc.stderr  # asked for


@pytest.mark.parametrize("factor, said", [(1e30, "embeds to NaN or inf"), (0.0, "embeds to the zero vector")])
def test_search_refuses_an_encoder_whose_probe_text_overflows_or_vanishes(built, tmp_path, factor, said):  # noqa: F811
    # finite weights: only a forward pass tells (LayerNorm weights and biases scaled: x1e30 overflows, 0 zeroes)
    index_dir = tmp_path / "index"
    shutil.copytree(built["dir"], index_dir)
    _scale_tensors(factor, lambda k: "LayerNorm" in k or "dense" in k)(index_dir / "encoder" / "model.safetensors")
    with pytest.raises(SystemExit) as exc:
        main(["search", "--index", str(index_dir), "--query", "river", "--device", "cpu"])
    assert said in str(exc.value.code) and "\n" not in str(exc.value.code)


def test_a_sound_index_passes_every_check(built):  # noqa: F811
    index = load_index(built["dir"], device="cpu")
    index.index.check_consistent(built["dir"])
    assert index.info()["n_docs"] == 40
