"""Parsers of the non-BEIR source formats; each takes a local directory and returns a Dataset.

MS MARCO passage (collection/queries TSV, TREC-style qrels), NQ320K in the
NCI-style JSON-lines layout, and LF-AmazonTitles-131K in the Extreme Classification Repository's
JSON-lines format. Every one goes through :func:`ehi.data.validate.assemble`, so the same checks
apply to all of them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

import pandas as pd

from ehi.data.dataset import SPLITS, Dataset
from ehi.data.validate import DataError, assemble, iter_jsonl, iter_tsv, parse_relevance


def read_id_text(path: Path) -> tuple[list[str], list[str]]:
    """An MS MARCO ``id<TAB>text`` file (collection.tsv, queries.*.tsv[.gz])."""
    ids, texts = [], []
    for _, (id_, text) in iter_tsv(path, ncols=2):
        ids.append(id_)
        texts.append(text)
    return ids, texts


def read_trec_qrels(path: Path) -> pd.DataFrame:
    """TREC qrels ``qid iteration docid relevance``, tab- or space-separated."""
    rows = [(q, d, parse_relevance(r, path, n)) for n, (q, _, d, r) in iter_tsv(path, ncols=4, sep=None)]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"]).astype({"relevance": "int32"})


# split -> (candidate query files, candidate qrels files), first existing wins. dev is the usual
# 6,980-query dev.small; test is TREC DL 2019 (43 judged queries, graded 0-3).
MSMARCO_SPLITS = {
    "train": (("queries.train.tsv",), ("qrels.train.tsv",)),
    "dev": (("queries.dev.small.tsv", "queries.dev.tsv"), ("qrels.dev.small.tsv", "qrels.dev.tsv")),
    "test": (("msmarco-test2019-queries.tsv", "msmarco-test2019-queries.tsv.gz"), ("2019qrels-pass.txt",)),
}


def _first(root: Path, names: tuple[str, ...]) -> Path | None:
    return next((root / n for n in names if (root / n).is_file()), None)


def load_msmarco(path: str | os.PathLike, name: str | None = None, splits: Iterable[str] | None = None) -> Dataset:
    """MS MARCO passage: a split loads when its qrels file is present (or is requested)."""
    root = Path(path)
    if not (root / "collection.tsv").is_file():
        raise DataError(f"{root / 'collection.tsv'}: not found (is {root} an MS MARCO passage directory?)")
    doc_ids, texts = read_id_text(root / "collection.tsv")
    corpus = pd.DataFrame({"doc_id": doc_ids, "title": "", "text": texts})
    queries, qrels, where = [], {}, {"corpus": str(root / "collection.tsv")}
    for split in splits or SPLITS:
        if split not in MSMARCO_SPLITS:
            raise DataError(f"{root}: unknown split {split!r}; expected one of {SPLITS}")
        query_names, qrels_names = MSMARCO_SPLITS[split]
        qrels_file, query_file = _first(root, qrels_names), _first(root, query_names)
        if qrels_file is None and splits is None:
            continue
        if qrels_file is None or query_file is None:
            missing = qrels_names if qrels_file is None else query_names
            raise DataError(f"{root}: split {split!r} needs one of {list(missing)}")
        ids, texts = read_id_text(query_file)
        queries.append(pd.DataFrame({"query_id": ids, "text": texts}))
        qrels[split], where[split] = read_trec_qrels(qrels_file), str(qrels_file)
    where["queries"] = f"{root} queries files"
    queries_df = pd.concat(queries, ignore_index=True) if queries else pd.DataFrame(columns=["query_id", "text"])
    return assemble(name or "msmarco", corpus, queries_df, qrels, where)


def _nq_split(path: Path, split: str) -> tuple[list[tuple[str, str]], list[tuple[str, str, int]]]:
    queries, qrels = [], []
    for lineno, rec in iter_jsonl(path, required=("query", "docid")):
        qid = str(rec.get("nq_id") or f"{split}-{lineno}")
        queries.append((qid, str(rec["query"])))
        qrels.append((qid, str(rec["docid"]), 1))
    return queries, qrels


def load_nq320k(path: str | os.PathLike, name: str | None = None) -> Dataset:
    """NQ320K in the NCI-style JSON-lines layout of the Hugging Face dataset dqmis/NQ320K-NCI.

    corpus.jsonl ``{"docid", "document"[, "title"]}``; train.jsonl and valid.jsonl ``{"query",
    "docid"[, "nq_id"]}``, one (query, relevant document) pair per line, query id = ``nq_id`` (else
    ``<split>-<line>``). valid.jsonl is the held-out set every NQ320K paper reports on, so it is the
    test split here; an optional dev.jsonl becomes dev.
    """
    root = Path(path)
    files = {"train": root / "train.jsonl", "dev": root / "dev.jsonl", "test": root / "valid.jsonl"}
    for required in ("corpus.jsonl", "train.jsonl", "valid.jsonl"):
        if not (root / required).is_file():
            raise DataError(f"{root / required}: not found (is {root} an NQ320K directory?)")
    docs = [(str(r["docid"]), str(r.get("title") or ""), str(r.get("document") or ""))
            for _, r in iter_jsonl(root / "corpus.jsonl", required=("docid",))]
    corpus = pd.DataFrame(docs, columns=["doc_id", "title", "text"])
    queries, qrels = [], {}
    for split, file in files.items():
        if file.is_file():
            q, r = _nq_split(file, split)
            queries += q
            qrels[split] = pd.DataFrame(r, columns=["query_id", "doc_id", "relevance"])
    # A query with several relevant documents repeats on several lines: keep the query once.
    queries_df = pd.DataFrame(queries, columns=["query_id", "text"]).drop_duplicates()
    where = {"corpus": str(root / "corpus.jsonl"), "queries": f"{root} train/valid.jsonl"}
    return assemble(name or "nq320k", corpus, queries_df, qrels, where | {s: str(f) for s, f in files.items()})


def _xmc_points(file: Path, label_ids: list[str]) -> tuple[list[tuple[str, str]], pd.DataFrame]:
    queries, rows = [], []
    for lineno, rec in iter_jsonl(file, required=("uid", "target_ind")):
        qid = str(rec["uid"])
        queries.append((qid, str(rec.get("title") or "")))
        for ind in rec["target_ind"]:
            if not (isinstance(ind, int) and 0 <= ind < len(label_ids)):
                last = len(label_ids) - 1
                raise DataError(f"{file}, line {lineno}: target_ind {ind!r} is not a label index (0..{last})")
            rows.append((qid, label_ids[ind], 1))
    return queries, pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])


def load_xmc(path: str | os.PathLike, name: str | None = None) -> Dataset:
    """An Extreme Classification Repository dataset as retrieval: labels are documents.

    lbl.json.gz holds one label per line (its line index is the label id that ``target_ind`` uses);
    trn.json.gz and tst.json.gz hold points ``{"uid", "title", "target_ind"}`` that become train and
    test queries, each target a judgement of relevance 1 (``target_rel`` weights are not graded
    relevance, so they are ignored). Titles only: the LF-*Titles* datasets use no ``content``.
    A label's title goes in ``text`` (``title`` stays empty), as MS MARCO passages do.
    """
    root = Path(path)
    for required in ("lbl.json.gz", "trn.json.gz", "tst.json.gz"):
        if not (root / required).is_file():
            raise DataError(f"{root / required}: not found (is {root} an Extreme Classification dataset?)")
    labels = [(str(r["uid"]), "", str(r.get("title") or "")) for _, r in iter_jsonl(root / "lbl.json.gz", ("uid",))]
    corpus = pd.DataFrame(labels, columns=["doc_id", "title", "text"])
    queries, qrels, where = [], {}, {"corpus": str(root / "lbl.json.gz"), "queries": f"{root} trn/tst.json.gz"}
    for split, file in (("train", root / "trn.json.gz"), ("test", root / "tst.json.gz")):
        points, qrels[split] = _xmc_points(file, corpus.doc_id.tolist())
        queries += points
        where[split] = str(file)
    queries_df = pd.DataFrame(queries, columns=["query_id", "text"])
    return assemble(name or "lf-amazontitles-131k", corpus, queries_df, qrels, where)
