"""Precomputed embeddings as a dataset: ``dataset.source: embeddings`` (docs/embeddings.md).

A folder in this layout is a retrieval collection whose texts were encoded elsewhere (a GPU, an
other model) or never existed (the synthetic world of :mod:`ehi.data.vector_world`)::

    docs.npy | docs.safetensors        (N, d) float32 or float16, one row a document
    queries.npy | queries.safetensors  (Q, d) the same dtype and d, one row a query
    doc_ids.txt, query_ids.txt         one id a line, in the rows' order (N and Q lines)
    qrels/{train,dev,test}.tsv         BEIR qrels (query-id, corpus-id, score), each split optional;
                                       any other file there is refused (it would not be read)
    embeddings.json                    optional: who wrote it (``producer``) and what (recorded,
                                       not read)

Arrays are memory-mapped (a safetensors file holds one tensor, any name; its header is read here
and its data mapped, not copied). The checks are those of every source (:mod:`ehi.data.validate`)
plus the arrays': two dimensions, the same width, a float dtype, finite values of a norm float32
can square and not 0, one row an id. A
bad file stops the run with one line naming it, before anything is written.

The dataset's texts are keys into the arrays, ``d:<row>`` and ``q:<row>``: an encoder that reads
vectors in place of tokens looks its rows up by them.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import numpy as np
import pandas as pd

from ehi.core.norms import MAX_NORM, row_norms
from ehi.data.beir import SPLITS, qrels_files, read_qrels, unread_qrels
from ehi.data.dataset import Dataset
from ehi.data.sources import EMBEDDINGS_LAYOUT
from ehi.data.validate import DataError, assemble

DTYPES = {"float32": np.float32, "float16": np.float16}
SAFETENSORS_DTYPES = {"F32": np.float32, "F16": np.float16}
ARRAYS = ("docs", "queries")
MANIFEST = "embeddings.json"
DOC_KEY, QUERY_KEY = "d:", "q:"
CHECK_ROWS = 65_536  # rows checked at a time: a 10^6-row file in bounded memory


def array_path(root: Path, kind: str) -> Path:
    """The one file holding ``kind`` (docs or queries): .npy or .safetensors, not both."""
    found = [root / f"{kind}{ext}" for ext in (".npy", ".safetensors") if (root / f"{kind}{ext}").is_file()]
    if len(found) != 1:
        what = "both" if found else "neither"
        raise DataError(f"{root}: {what} of {kind}.npy and {kind}.safetensors found; expected exactly one")
    return found[0]


def _safetensors_memmap(path: Path) -> np.ndarray:
    """The single tensor of a safetensors file, memory-mapped (format: 8-byte header length,
    JSON header, then the raw little-endian data)."""
    with open(path, "rb") as fh:
        raw = fh.read(8)
        if len(raw) < 8:
            raise DataError(f"{path}: not a safetensors file (shorter than its 8-byte header length)")
        (n,) = struct.unpack("<Q", raw)
        try:
            header = json.loads(fh.read(n))
        except (ValueError, UnicodeDecodeError) as err:
            raise DataError(f"{path}: not a safetensors file ({err})") from None
    tensors = {k: v for k, v in header.items() if k != "__metadata__"}
    if len(tensors) != 1:
        raise DataError(f"{path}: holds {len(tensors)} tensors; expected one (the {path.stem} matrix)")
    (info,) = tensors.values()
    if info.get("dtype") not in SAFETENSORS_DTYPES:
        raise DataError(f"{path}: dtype {info.get('dtype')}; expected F32 or F16")
    start, end = info["data_offsets"]
    dtype, shape = np.dtype(SAFETENSORS_DTYPES[info["dtype"]]), tuple(info["shape"])
    if end - start != int(np.prod(shape)) * dtype.itemsize:
        raise DataError(f"{path}: data of {end - start} bytes for shape {shape} {dtype}")
    return np.memmap(path, dtype=dtype.newbyteorder("<"), mode="r", offset=8 + n + start, shape=shape)


def read_array(path: str | os.PathLike) -> np.ndarray:
    """A .npy or .safetensors matrix, memory-mapped and checked: 2-D, float32/float16, finite, no
    row all zeros (a vector with no direction: cosine is undefined, and every score with it the same)
    and none of a norm above :data:`ehi.core.norms.MAX_NORM` (float32 cannot square it)."""
    path = Path(path)
    try:
        arr = np.load(path, mmap_mode="r") if path.suffix == ".npy" else _safetensors_memmap(path)
    except (ValueError, OSError) as err:
        raise DataError(f"{path}: not a readable .npy file ({err})") from None
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:  # zero columns: FAISS dies of SIGFPE
        raise DataError(f"{path}: shape {arr.shape}; expected (rows, dim) with at least one row and one column")
    if arr.dtype not in (np.float32, np.float16):
        raise DataError(f"{path}: dtype {arr.dtype}; expected float32 or float16")
    for start in range(0, len(arr), CHECK_ROWS):
        norms = row_norms(arr[start:start + CHECK_ROWS])
        bad = ~np.isfinite(norms)
        if bad.any():
            raise DataError(f"{path}: row {start + int(np.argmax(bad))} holds a NaN or infinite value")
        zero = norms == 0
        if zero.any():
            raise DataError(f"{path}: row {start + int(np.argmax(zero))} is all zeros: a vector with no direction "
                            "ranks nothing (leave its document or query out, or give it its encoder's vector)")
        big = norms > MAX_NORM
        if big.any():
            row = int(np.argmax(big))
            raise DataError(f"{path}: row {start + row} has norm {norms[row]:.3g}, above {MAX_NORM:.3g}: its squared "
                            "norm overflows float32, so it normalises to zeros and scores overflow (scale the "
                            "vectors down)")
    return arr


def read_ids(path: Path, n_rows: int, rows_of: str) -> pd.Series:
    """One id a line; as many lines as ``rows_of`` has rows."""
    if not path.is_file():
        raise DataError(f"{path}: not found (one id a line, in the rows' order of {rows_of})")
    ids = pd.Series(path.read_text(encoding="utf-8").splitlines(), dtype=object)
    if len(ids) != n_rows:
        raise DataError(f"{path}: {len(ids)} ids for the {n_rows} rows of {rows_of}")
    empty = ids[ids.str.strip() == ""]
    if len(empty):
        raise DataError(f"{path}: line {empty.index[0] + 1} is an empty id")
    return ids


def read_manifest(root: Path) -> dict:
    path = Path(root) / MANIFEST
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text())
    except ValueError as err:
        raise DataError(f"{path}: not JSON ({err})") from None


def load_arrays(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """The checked document and query matrices of a layout folder (memory-mapped)."""
    root = Path(path).expanduser()
    docs, queries = (read_array(array_path(root, kind)) for kind in ARRAYS)
    if docs.shape[1] != queries.shape[1] or docs.dtype != queries.dtype:
        raise DataError(f"{root}: documents are {docs.shape[1]}-d {docs.dtype}, queries {queries.shape[1]}-d "
                        f"{queries.dtype}; expected the same width and dtype")
    return docs, queries


def load_embeddings(path: str | os.PathLike, name: str | None = None) -> Dataset:
    """The ``embeddings`` source's parser: a layout folder as a :class:`Dataset` whose texts are
    row keys (``d:<row>``, ``q:<row>``), checked as every source is."""
    root = Path(path).expanduser()
    if not root.is_dir():
        raise DataError(f"{root}: not a directory (an embeddings dataset is a folder: {EMBEDDINGS_LAYOUT})")
    docs, queries = load_arrays(root)
    doc_ids = read_ids(root / "doc_ids.txt", len(docs), array_path(root, "docs").name)
    query_ids = read_ids(root / "query_ids.txt", len(queries), array_path(root, "queries").name)
    corpus = pd.DataFrame({"doc_id": doc_ids, "title": "", "text": DOC_KEY + pd.Series(np.arange(len(docs))).astype(str)})
    query_table = pd.DataFrame({"query_id": query_ids,
                                "text": QUERY_KEY + pd.Series(np.arange(len(queries))).astype(str)})
    unread = unread_qrels(root)
    if unread:
        raise DataError(f"{unread[0]}: not read, the qrels files of a split are {', '.join(s + '.tsv' for s in SPLITS)} "
                        "(rename it to the split it holds, or move it out of qrels/)")
    files = qrels_files(root, None)
    where = {"corpus": str(root / "doc_ids.txt"), "queries": str(root / "query_ids.txt"),
             **{split: str(file) for split, file in files.items()}}
    return assemble(name or root.resolve().name, corpus, query_table,
                    {split: read_qrels(file) for split, file in files.items()}, where)


def create_array(path: str | os.PathLike, shape: tuple[int, int], dtype: str = "float32") -> np.ndarray:
    """A writable memory-mapped .npy of ``shape``: producers fill it in chunks."""
    if dtype not in DTYPES:
        raise ValueError(f"dtype {dtype!r}: expected one of {sorted(DTYPES)}")
    return np.lib.format.open_memmap(Path(path), mode="w+", dtype=DTYPES[dtype], shape=shape)


def write_ids(path: str | os.PathLike, ids) -> None:
    ids = [str(i) for i in ids]
    bad = next((i for i in ids if not i.strip() or "\n" in i or "\r" in i), None)
    if bad is not None:
        raise DataError(f"{path}: id {bad!r} is empty or holds a line break")
    Path(path).write_text("".join(i + "\n" for i in ids), encoding="utf-8")


def write_qrels(root: str | os.PathLike, qrels: pd.DataFrame) -> None:
    """``qrels`` (query_id, doc_id, relevance, split) as qrels/<split>.tsv with BEIR's header."""
    folder = Path(root) / "qrels"
    folder.mkdir(parents=True, exist_ok=True)
    for split, part in qrels.groupby("split", sort=True):
        part[["query_id", "doc_id", "relevance"]].rename(
            columns={"query_id": "query-id", "doc_id": "corpus-id", "relevance": "score"}
        ).to_csv(folder / f"{split}.tsv", sep="\t", index=False)


def write_manifest(root: str | os.PathLike, manifest: dict) -> None:
    (Path(root) / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
