"""Read a local BEIR directory: the common on-disk input of every dataset in the pipeline.

Layout (as published by BEIR, https://github.com/beir-cellar/beir)::

    corpus.jsonl        {"_id": ..., "title": ..., "text": ...}   one document per line
    queries.jsonl       {"_id": ..., "text": ...}                 one query per line
    qrels/train.tsv     query-id <TAB> corpus-id <TAB> score      with that header line
    qrels/dev.tsv       (each split file optional)
    qrels/test.tsv

Any directory in this layout is a dataset by configuration alone. A query takes the split of the
qrels file that judges it; the rules for bad input are in :mod:`ehi.data.validate`.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Iterable

import pandas as pd

from ehi.data.dataset import SPLITS, Dataset
from ehi.data.validate import DataError, assemble, iter_jsonl, iter_tsv, parse_relevance, record_id, record_text

log = logging.getLogger("ehi.data")

QRELS_HEADER = ("query-id", "corpus-id", "score")


def read_corpus(path: str | os.PathLike) -> pd.DataFrame:
    """corpus.jsonl as doc_id/title/text; a missing title or text reads as empty."""
    ids, titles, texts = [], [], []
    for lineno, rec in iter_jsonl(path, required=("_id",)):
        ids.append(record_id(rec, "_id", path, lineno))
        titles.append(record_text(rec, "title", path, lineno))
        texts.append(record_text(rec, "text", path, lineno))
    return pd.DataFrame({"doc_id": ids, "title": titles, "text": texts})


def read_queries(path: str | os.PathLike) -> pd.DataFrame:
    """queries.jsonl as query_id/text (BEIR's per-query ``metadata`` is not used)."""
    ids, texts = [], []
    for lineno, rec in iter_jsonl(path, required=("_id",)):
        ids.append(record_id(rec, "_id", path, lineno))
        texts.append(record_text(rec, "text", path, lineno))
    return pd.DataFrame({"query_id": ids, "text": texts})


def read_qrels(path: str | os.PathLike) -> pd.DataFrame:
    """One qrels/<split>.tsv as query_id/doc_id/relevance; the header line is required."""
    qids, dids, rels = [], [], []
    for lineno, (qid, did, score) in iter_tsv(path, ncols=3, header=QRELS_HEADER):
        qids.append(qid)
        dids.append(did)
        rels.append(parse_relevance(score, path, lineno))
    return pd.DataFrame({"query_id": qids, "doc_id": dids, "relevance": pd.array(rels, dtype="int32")})


def qrels_files(root: Path, splits: Iterable[str] | None) -> dict[str, Path]:
    """The qrels file of each requested split (default: every split whose file exists)."""
    if splits is None:
        found = {s: root / "qrels" / f"{s}.tsv" for s in SPLITS if (root / "qrels" / f"{s}.tsv").is_file()}
        if not found:
            raise DataError(f"{root / 'qrels'}: no qrels file; expected one or more of {[s + '.tsv' for s in SPLITS]}")
        return found
    files = {}
    for split in splits:
        if split not in SPLITS:
            raise DataError(f"{root}: unknown split {split!r}; expected one of {SPLITS}")
        files[split] = root / "qrels" / f"{split}.tsv"
        if not files[split].is_file():
            raise DataError(f"{files[split]}: qrels file of requested split {split!r} not found")
    return files


def load_beir(path: str | os.PathLike, name: str | None = None, splits: Iterable[str] | None = None) -> Dataset:
    """Load a BEIR directory as a :class:`Dataset` named ``name`` (default: the directory name)."""
    root = Path(path).expanduser()
    if not root.is_dir():
        raise DataError(f"{root}: not a directory (a BEIR dataset is a directory: corpus.jsonl, queries.jsonl, qrels/)")
    for required in ("corpus.jsonl", "queries.jsonl"):
        if not (root / required).is_file():
            raise DataError(f"{root / required}: not found (is {root} a BEIR directory?)")
    name = name or root.resolve().name
    files = qrels_files(root, splits)
    corpus = read_corpus(root / "corpus.jsonl")
    queries = read_queries(root / "queries.jsonl")
    qrels = {split: read_qrels(file) for split, file in files.items()}
    where = {"corpus": str(root / "corpus.jsonl"), "queries": str(root / "queries.jsonl")}
    where.update({split: str(file) for split, file in files.items()})
    ds = assemble(name, corpus, queries, qrels, where)
    log.info(
        "%s: %d documents, %s",
        name,
        len(ds.corpus),
        ", ".join(f"{s} {int((ds.queries.split == s).sum())} queries" for s in files),
    )
    return ds
