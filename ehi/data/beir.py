"""Read a local BEIR directory: the common on-disk input of every dataset in the pipeline.

Layout (as published by BEIR, https://github.com/beir-cellar/beir)::

    corpus.jsonl        {"_id": ..., "title": ..., "text": ...}   one document per line
    queries.jsonl       {"_id": ..., "text": ...}                 one query per line
    qrels/train.tsv     query-id <TAB> corpus-id <TAB> score      with that header line or none
    qrels/dev.tsv       (each split file optional)
    qrels/test.tsv

Any directory in this layout is a dataset by configuration alone. A query takes the split of the
qrels file that judges it; the rules for bad input are in :mod:`ehi.data.validate`. Shapes that are
no error (CRLF line ends, no header, zero/graded/negative relevance, ids as JSON numbers) are read
and counted per file in the log (:mod:`ehi.data.input_counts`).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Iterable

import pandas as pd

from ehi.data.dataset import SPLITS, Dataset
from ehi.data.input_counts import RELEVANCE, InputCounts, id_text
from ehi.data.validate import DataError, assemble, iter_jsonl, iter_tsv, parse_relevance, record_id, record_text

log = logging.getLogger("ehi.data")

QRELS_HEADER = ("query-id", "corpus-id", "score")
LAYOUT_FILES = ("corpus.jsonl", "queries.jsonl", *(f"qrels/{split}.tsv" for split in SPLITS))
CACHE_FILES = ("downloads", "checksums.json")  # the download cache's own, where an archive unpacks at the root
NAMED_AT_MOST = 10


def unknown_files(root: Path) -> list[str]:
    """Files under ``root`` outside the BEIR layout (e.g. a ``qrels/validation.tsv``, which no split
    reads), relative to it: named in the log, so that nothing is ignored without a word."""
    found = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        # hidden files are tools' own (Snakemake's .snakemake_timestamp in a directory() output)
        if path.is_file() and rel not in LAYOUT_FILES and rel.split("/")[0] not in CACHE_FILES \
                and not rel.endswith(".extracted") and not path.name.startswith("."):
            found.append(rel)
    return found


def read_corpus(path: str | os.PathLike, counts: InputCounts | None = None) -> pd.DataFrame:
    """corpus.jsonl as doc_id/title/text; a missing title or text reads as empty."""
    tally = (counts or InputCounts()).of(path)
    ids, titles, texts = [], [], []
    for lineno, rec in iter_jsonl(path, required=("_id",), tally=tally):
        record_id(rec, "_id", path, lineno)  # refuses a null, empty or non-scalar id
        ids.append(id_text(rec["_id"], tally))
        titles.append(record_text(rec, "title", path, lineno))
        texts.append(record_text(rec, "text", path, lineno))
    return pd.DataFrame({"doc_id": ids, "title": titles, "text": texts})


def read_queries(path: str | os.PathLike, counts: InputCounts | None = None) -> pd.DataFrame:
    """queries.jsonl as query_id/text (BEIR's per-query ``metadata`` is not used)."""
    tally = (counts or InputCounts()).of(path)
    ids, texts = [], []
    for lineno, rec in iter_jsonl(path, required=("_id",), tally=tally):
        record_id(rec, "_id", path, lineno)  # refuses a null, empty or non-scalar id
        ids.append(id_text(rec["_id"], tally))
        texts.append(record_text(rec, "text", path, lineno))
    return pd.DataFrame({"query_id": ids, "text": texts})


def read_qrels(path: str | os.PathLike, counts: InputCounts | None = None) -> pd.DataFrame:
    """One qrels/<split>.tsv as query_id/doc_id/relevance, with BEIR's header line or without one
    (a line 1 whose score is an integer is a judgement). Every grade is kept: 0, graded, negative."""
    tally = (counts or InputCounts()).of(path)
    qids, dids, rels = [], [], []
    for lineno, (qid, did, score) in iter_tsv(path, ncols=3, tally=tally):
        if lineno == 1:
            if (qid, did, score) == QRELS_HEADER:
                continue
            if not _is_integer(score):
                line, want = "\t".join((qid, did, score)), "\t".join(QRELS_HEADER)
                raise DataError(f"{path}, line 1: header is {line!r}; expected {want!r} (or no header)")
            tally["no_header"] += 1
        qids.append(qid)
        dids.append(did)
        rels.append(parse_relevance(score, path, lineno))
        tally[RELEVANCE, rels[-1]] += 1
    return pd.DataFrame({"query_id": qids, "doc_id": dids, "relevance": pd.array(rels, dtype="int32")})


def _is_integer(text: str) -> bool:
    try:
        int(text)
        return True
    except ValueError:
        return False


def unread_qrels(root: Path) -> list[Path]:
    """Files of ``root``/qrels that no split reads (``validation.tsv``: the splits are :data:`SPLITS`);
    the embeddings layout refuses them (:func:`ehi.data.embeddings.load_embeddings`), a BEIR folder
    names them in its log with every file outside its layout."""
    folder = root / "qrels"
    read = {f"{s}.tsv" for s in SPLITS}
    return sorted(p for p in folder.iterdir() if p.name not in read and not p.name.startswith(".")) if folder.is_dir() else []


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
    unread = unknown_files(root)
    if unread:
        more = f" and {len(unread) - NAMED_AT_MOST} more" if len(unread) > NAMED_AT_MOST else ""
        log.warning("%s: not read, outside the BEIR layout (%s): %s%s", root, ", ".join(LAYOUT_FILES),
                    ", ".join(unread[:NAMED_AT_MOST]), more)
    counts = InputCounts()
    corpus = read_corpus(root / "corpus.jsonl", counts)
    queries = read_queries(root / "queries.jsonl", counts)
    qrels = {split: read_qrels(file, counts) for split, file in files.items()}
    counts.log()
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
