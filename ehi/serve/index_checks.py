"""What :func:`ehi.serve.api.load_index` checks before it hands out an index, so that ``ehi info``
and ``ehi search`` agree on whether a directory is usable: every file present and readable, the
document table, the tree index and the encoder of one size and dimension, and the tokenizer
complete and made for the encoder's vocabulary.

Cheap on purpose: JSON and safetensors headers only, no model weights loaded (the encoder's
tensors are compared with a weightless model built from its config). A tokenizer folder
without its vocabulary still loads in transformers (as a 5-token vocabulary that maps every query
to the same ids), which is why its files are checked here rather than left to the loader.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ehi.core.errors import SearchIndexError
from ehi.core.io import read_json_object
from ehi.model.encoder_checks import check_encoder_folder

VOCAB_FILES = ("tokenizer.json", "vocab.txt")  # a fast tokenizer's file, or a BERT WordPiece vocabulary


def read_docs(path: Path, n_docs: int) -> pd.DataFrame:
    """docs.parquet (doc_id, title), one row per indexed document."""
    try:
        table = pq.read_table(path, columns=["doc_id", "title"])
    except (OSError, ValueError, KeyError) as err:  # pyarrow's ArrowInvalid is a ValueError
        raise SearchIndexError(f"{path}: not a readable document table with doc_id and title ({err})") from None
    if table.num_rows != n_docs:
        raise SearchIndexError(f"{path}: {table.num_rows} documents, the index holds {n_docs}")
    for name in ("doc_id", "title"):
        if not pa.types.is_string(table.schema.field(name).type):
            raise SearchIndexError(f"{path}: column {name} is {table.schema.field(name).type}, "
                                   "save_search_index writes strings")
    docs = table.to_pandas()
    ids = docs.doc_id
    bad = ids.isna() | (ids.fillna("").str.strip() == "")
    if bad.any():
        raise SearchIndexError(f"{path}: {int(bad.sum())} empty or null doc_id(s), first at row {int(bad.idxmax())}")
    if ids.duplicated().any():
        first = ids[ids.duplicated()].iloc[0]
        raise SearchIndexError(f"{path}: doc_id {first!r} appears {int((ids == first).sum())} times; "
                               "document ids must be unique")
    docs["title"] = docs.title.fillna("")
    return docs


def _tokenizer_ids(folder: Path) -> tuple[int, str]:
    """(largest token id, the file it is from) of the tokenizer saved in ``folder``."""
    if (folder / "tokenizer.json").is_file():
        spec = read_json_object(folder / "tokenizer.json", SearchIndexError)
        vocab = (spec.get("model") or {}).get("vocab")
        ids = list(vocab.values()) if isinstance(vocab, dict) else list(range(len(vocab or [])))
        ids += [t.get("id", -1) for t in spec.get("added_tokens") or [] if isinstance(t, dict)]
        if len(ids) <= len(spec.get("added_tokens") or []):
            raise SearchIndexError(f"{folder / 'tokenizer.json'}: the tokenizer has no vocabulary")
        return max(ids), "tokenizer.json"
    try:
        lines = (folder / "vocab.txt").read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise SearchIndexError(f"{folder / 'vocab.txt'}: not a readable vocabulary ({err})") from None
    return len(lines) - 1, "vocab.txt"


def check_tower_dir(folder: Path, dim: int) -> None:
    """A saved vector tower (ehi.model.tower): a spec of a known kind, the index's dimension where
    it records one, and the weights file of a kind that has weights."""
    from ehi.model.tower import KINDS, SPEC

    spec = read_json_object(folder / SPEC, SearchIndexError)
    kind = spec.get("kind", "identity")
    if kind not in KINDS:
        raise SearchIndexError(f"{folder / SPEC}: tower kind {kind!r}, expected one of {', '.join(KINDS)}")
    if spec.get("dim") is not None and spec["dim"] != dim:
        raise SearchIndexError(f"{folder / SPEC}: the tower maps {spec['dim']}-dimensional vectors, the index holds {dim}")
    if kind != "identity" and not (folder / "model.safetensors").is_file():
        raise SearchIndexError(f"{folder}: a {kind} tower without its weights (model.safetensors)")


def check_encoder_dir(folder: Path, dim: int) -> None:
    """The saved encoder: an output dimension equal to the index's, a tokenizer of its vocabulary,
    and weights that fill its config's model exactly (:func:`check_encoder_folder`); or a vector
    tower (:func:`check_tower_dir`)."""
    if (folder / "tower.json").is_file():
        return check_tower_dir(folder, dim)
    config = read_json_object(folder / "config.json", SearchIndexError)
    hidden, vocab_size = config.get("hidden_size", config.get("dim")), config.get("vocab_size")
    if hidden is not None and hidden != dim:
        raise SearchIndexError(f"{folder / 'config.json'}: the encoder embeds in {hidden} dimensions, the index in {dim}")
    if not any((folder / name).is_file() for name in VOCAB_FILES):
        raise SearchIndexError(f"{folder}: tokenizer files missing (need one of {', '.join(VOCAB_FILES)}); "
                               "save the encoder with Encoder.save, which writes them")
    top, source = _tokenizer_ids(folder)
    if isinstance(vocab_size, int) and top >= vocab_size:
        raise SearchIndexError(f"{folder / source}: token ids up to {top}, but the encoder's vocabulary has "
                               f"{vocab_size} entries: the tokenizer belongs to another model")
    check_encoder_folder(folder, SearchIndexError)


def read_index_config(path: Path, format_version: int) -> dict:
    """config.json of a search-index directory, of this format version, with the encoder's max_length."""
    config = read_json_object(path, SearchIndexError)
    if config.get("format_version") != format_version:
        raise SearchIndexError(f"{path.parent}: search-index format {config.get('format_version')}, expected {format_version}")
    encoder = config.get("encoder")
    max_length = encoder.get("max_length") if isinstance(encoder, dict) else None
    if not isinstance(max_length, int) or max_length < 1:
        raise SearchIndexError(f"{path}: encoder.max_length must be a positive integer, got {json.dumps(max_length)}")
    return config
