"""Checks that every dataset loader shares: line-level readers and table-level rules.

Each problem is either a :class:`DataError` that names the file and the line or key, or a counted
warning logged once with its count. Nothing is dropped silently. The split between the two:

errors (the run would be wrong, not just smaller)
    malformed JSONL/TSV line, missing ``_id``, qrels header or column count, non-integer relevance,
    duplicate doc or query ids, conflicting duplicate judgements, judgements naming an unknown
    document (metrics would count an unfindable document as relevant), a judged query missing from
    the queries file, a query judged in two splits (train/test leakage), an empty query text, an
    empty corpus, a split file with no judged query.
    An ``_id`` that is not a non-empty string or an integer, a title or text that is not a string,
    a split without one relevant judgement (relevance >= 1, :mod:`ehi.data.judgements`).
counted warnings (the run is still right)
    documents whose title and text are both empty (kept: they are retrievable, just uninformative),
    queries without any judgement (left out of every split: they cannot be scored), identical
    duplicate judgements (kept once).
    Negative relevance, and queries judged with relevance <= 0 only (not relevant, kept in their
    split, neither trained on nor evaluated).
"""

from __future__ import annotations

import gzip
import json
import logging
import os
from collections import Counter
from pathlib import Path
from typing import Iterator, Mapping

import pandas as pd

from ehi.core.errors import DataError  # defined with the other user errors; data modules import it from here
from ehi.data.dataset import SPLITS, Dataset
from ehi.data.judgements import check_split_judgements

log = logging.getLogger("ehi.data")


def read_lines(path: str | os.PathLike, tally: Counter | None = None) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, line)``, gunzipping ``*.gz``. Lines are decoded one by one so that an
    encoding error names its exact line (a text-mode reader decodes whole buffers at once).
    ``tally["crlf_lines"]`` counts the lines that end in CRLF (Windows line ends read as LF)."""
    path = Path(path)
    with (gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")) as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                # utf-8-sig on line 1: a byte-order mark some editors add is not data.
                line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
            except UnicodeDecodeError as err:
                raise DataError(f"{path}, line {lineno}: not UTF-8 ({err.reason})") from None
            if tally is not None and line.endswith("\r\n"):
                tally["crlf_lines"] += 1
            yield lineno, line


def iter_jsonl(
    path: str | os.PathLike, required: tuple[str, ...] = (), tally: Counter | None = None
) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, record)``; blank lines carry no data and are skipped."""
    for lineno, line in read_lines(path, tally):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise DataError(f"{path}, line {lineno}: malformed JSON ({err.msg})") from None
        if not isinstance(record, dict):
            raise DataError(f"{path}, line {lineno}: expected a JSON object, got {type(record).__name__}")
        for key in required:
            if key not in record:
                raise DataError(f"{path}, line {lineno}: missing key {key!r}")
        yield lineno, record


def iter_tsv(
    path: str | os.PathLike, ncols: int, header: tuple[str, ...] | None = None, sep: str | None = "\t",
    tally: Counter | None = None,
) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(line_number, fields)`` of a delimited file; ``sep=None`` splits on any whitespace."""
    for lineno, line in read_lines(path, tally):
        line = line.rstrip("\r\n")
        if lineno == 1 and header is not None:
            if line.split(sep) != list(header):
                want = (sep or " ").join(header)
                raise DataError(f"{path}, line 1: header is {line!r}; expected {want!r}")
            continue
        if not line.strip():
            continue
        fields = line.split(sep, ncols - 1) if sep else line.split()
        if len(fields) != ncols:
            raise DataError(f"{path}, line {lineno}: expected {ncols} columns, found {len(fields)}")
        yield lineno, fields


def record_id(record: dict, key: str, path: str | os.PathLike, lineno: int) -> str:
    """An id field as a string: a non-empty string or an integer (null would become "None")."""
    value = record[key]
    if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value).strip():
        raise DataError(f"{path}, line {lineno}: {key!r} must be a non-empty string or an integer, got {value!r}")
    return str(value)


def record_text(record: dict, key: str, path: str | os.PathLike, lineno: int) -> str:
    """A text field as a string; missing or null reads as empty, any other non-string is refused."""
    value = record.get(key)
    if value is not None and not isinstance(value, str):
        raise DataError(f"{path}, line {lineno}: {key!r} must be a string, got {type(value).__name__} {value!r:.40}")
    return value or ""


RELEVANCE_BOUND = 2**31


def parse_relevance(value: str, path: str | os.PathLike, lineno: int) -> int:
    try:
        grade = int(value)
    except ValueError:
        raise DataError(f"{path}, line {lineno}: relevance {value!r} is not an integer") from None
    if not -RELEVANCE_BOUND <= grade < RELEVANCE_BOUND:  # the qrels table stores int32 grades
        raise DataError(f"{path}, line {lineno}: relevance {value} is outside the 32-bit grades qrels store "
                        f"(|relevance| < {RELEVANCE_BOUND})")
    return grade


def warn(message: str, warnings: list[str]) -> None:
    log.warning(message)
    warnings.append(message)


def _examples(values, k: int = 3) -> str:
    return ", ".join(repr(v) for v in list(values)[:k])


def check_unique(ids: pd.Series, what: str, where: str) -> None:
    dup = ids[ids.duplicated(keep=False)]
    if len(dup):
        n = dup.nunique()
        raise DataError(f"{where}: {n} duplicate {what} id(s), e.g. {_examples(dup.unique())}")


def check_corpus(corpus: pd.DataFrame, where: str, warnings: list[str]) -> None:
    if corpus.empty:
        raise DataError(f"{where}: the corpus is empty")
    check_unique(corpus.doc_id, "document", where)
    empty = corpus.doc_id[(corpus.title.str.strip() == "") & (corpus.text.str.strip() == "")]
    if len(empty):
        warn(f"{where}: {len(empty)} document(s) with empty title and text (kept), e.g. {_examples(empty)}", warnings)


def check_queries(queries: pd.DataFrame, where: str) -> None:
    check_unique(queries.query_id, "query", where)
    empty = queries.query_id[queries.text.str.strip() == ""]
    if len(empty):
        raise DataError(f"{where}: {len(empty)} query(ies) with empty text, e.g. {_examples(empty)}")


def check_qrels(
    qrels: pd.DataFrame, doc_ids: pd.Series, query_ids: pd.Series, where: str, warnings: list[str]
) -> pd.DataFrame:
    """Check one split's judgements; return them with identical duplicates kept once."""
    unknown = qrels[~qrels.doc_id.isin(doc_ids)]
    if len(unknown):
        pairs = _examples(zip(unknown.query_id, unknown.doc_id))
        n = len(unknown)
        raise DataError(f"{where}: {n} judgement(s) name documents not in the corpus, e.g. (query, doc) {pairs}")
    missing = qrels.query_id[~qrels.query_id.isin(query_ids)].unique()
    if len(missing):
        raise DataError(f"{where}: {len(missing)} judged query id(s) not in the queries, e.g. {_examples(missing)}")
    keyed = qrels.duplicated(["query_id", "doc_id"], keep=False)
    if keyed.any():
        clash = qrels[keyed].groupby(["query_id", "doc_id"]).relevance.nunique()
        if (clash > 1).any():
            raise DataError(f"{where}: conflicting relevance for (query, doc) {_examples(clash[clash > 1].index)}")
        n = int(qrels.duplicated(["query_id", "doc_id"]).sum())
        warn(f"{where}: {n} repeated identical judgement(s) kept once", warnings)
        qrels = qrels.drop_duplicates(["query_id", "doc_id"])
    return qrels


def assemble(
    name: str,
    corpus: pd.DataFrame,
    queries: pd.DataFrame,
    qrels: Mapping[str, pd.DataFrame],
    where: Mapping[str, str] | None = None,
) -> Dataset:
    """Check raw tables and give each judged query the split of its judgements.

    ``queries`` has query_id and text; ``qrels`` maps a split name to its judgements (query_id,
    doc_id, relevance); ``where`` labels ``corpus``, ``queries`` and each split with the file they
    came from, so messages point at it.
    """
    where = {"corpus": f"{name} corpus", "queries": f"{name} queries", **(where or {})}
    warnings: list[str] = []
    check_corpus(corpus, where["corpus"], warnings)
    check_queries(queries, where["queries"])
    parts = []
    for split, frame in qrels.items():
        label = where.get(split, f"{name} qrels ({split})")
        if split not in SPLITS:
            raise DataError(f"{label}: unknown split {split!r}; expected one of {SPLITS}")
        frame = check_qrels(frame, corpus.doc_id, queries.query_id, label, warnings)
        if frame.empty:
            raise DataError(f"{label}: split {split!r} has no judged queries")
        for note in check_split_judgements(frame, split, label):  # relevance <= 0 is not relevant
            warn(note, warnings)
        parts.append(frame.assign(split=split))
    if not parts:
        raise DataError(f"{name}: no qrels for any split")
    all_qrels = pd.concat(parts, ignore_index=True)
    # One query in two splits would leak test judgements into training.
    per_split = all_qrels.drop_duplicates(["query_id", "split"])
    leaked = per_split[per_split.query_id.duplicated(keep=False)]
    if len(leaked):
        qid = leaked.query_id.iloc[0]
        both = [where.get(s, s) for s in leaked.split[leaked.query_id == qid]]
        n = leaked.query_id.nunique()
        raise DataError(f"{name}: {n} query(ies) judged in two splits, e.g. {qid!r} in {' and '.join(both)}")
    split_of = per_split.set_index("query_id").split
    queries = queries.assign(split=queries.query_id.map(split_of))
    unjudged = queries.split.isna()
    if unjudged.any():
        warn(
            f"{where['queries']}: {int(unjudged.sum())} query(ies) without judgements left out of every split, "
            f"e.g. {_examples(queries.query_id[unjudged])}",
            warnings,
        )
    queries = queries[~unjudged].reset_index(drop=True)
    qrels_out = all_qrels[["query_id", "doc_id", "relevance", "split"]]
    return Dataset(name, corpus.reset_index(drop=True), queries, qrels_out)


def check_dataset(ds: Dataset) -> Dataset:
    """Re-check an assembled dataset (e.g. a generated one) and that its query splits match its qrels."""
    rebuilt = assemble(
        ds.name,
        ds.corpus,
        ds.queries[["query_id", "text"]],
        {s: ds.qrels[ds.qrels.split == s][["query_id", "doc_id", "relevance"]] for s in ds.qrels.split.unique()},
    )
    given = ds.queries.set_index("query_id").split
    derived = rebuilt.queries.set_index("query_id").split
    wrong = derived[given.reindex(derived.index) != derived]
    if len(wrong):
        raise DataError(
            f"{ds.name}: {len(wrong)} query(ies) whose split differs from their qrels' split, "
            f"e.g. {_examples(wrong.index)}"
        )
    return rebuilt
