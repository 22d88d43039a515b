"""The in-memory form of a retrieval dataset: three tables in the schemas of ``ehi.core.schemas``."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ehi.core.io import read_table, write_table
from ehi.core.schemas import SPLITS  # noqa: F401 (data modules import it from here)
from ehi.data.judgements import relevant


@dataclass
class Dataset:
    """A corpus, its queries (with a ``split`` column) and graded judgements (qrels)."""

    name: str
    corpus: pd.DataFrame  # doc_id, title, text
    queries: pd.DataFrame  # query_id, text, split
    qrels: pd.DataFrame  # query_id, doc_id, relevance, split

    def split(self, name: str) -> tuple[pd.DataFrame, pd.DataFrame]:
        """Queries and qrels of one split."""
        return self.queries[self.queries.split == name], self.qrels[self.qrels.split == name]

    def judged_rows(self, name: str) -> tuple[list[int], list[dict[int, int]]]:
        """The judged queries of split ``name`` in its order, as rows of queries.parquet (and of its
        embeddings), and each one's relevant documents as ``{corpus row: grade}`` in qrels order."""
        queries, qrels = self.split(name)
        doc_row = {d: i for i, d in enumerate(self.corpus.doc_id)}
        query_row = {q: i for i, q in enumerate(self.queries.query_id)}
        grades = {q: {doc_row[d]: int(r) for d, r in zip(rows.doc_id, rows.relevance)}
                  for q, rows in relevant(qrels).groupby("query_id")}
        ids = [q for q in queries.query_id if q in grades]
        return [query_row[q] for q in ids], [grades[q] for q in ids]

    def write(self, out_dir: str | os.PathLike, meta: dict | None = None) -> dict[str, Path]:
        """Write corpus/queries/qrels Parquet files (each cast to its schema) under ``out_dir``."""
        out = Path(out_dir)
        meta = {"dataset": self.name, **(meta or {})}
        return {
            kind: write_table(getattr(self, kind), kind, out / f"{kind}.parquet", meta)
            for kind in ("corpus", "queries", "qrels")
        }

    @classmethod
    def read(cls, in_dir: str | os.PathLike, name: str | None = None) -> "Dataset":
        src = Path(in_dir)
        tables = {kind: read_table(src / f"{kind}.parquet", kind) for kind in ("corpus", "queries", "qrels")}
        return cls(name=name or src.name, **tables)


def qrels_dict(qrels: pd.DataFrame) -> dict[str, dict[str, int]]:
    """qrels as ``{query_id: {doc_id: relevance}}``, the form ranx and ir-measures take."""
    out: dict[str, dict[str, int]] = {}
    for qid, did, rel in zip(qrels.query_id, qrels.doc_id, qrels.relevance):
        out.setdefault(str(qid), {})[str(did)] = int(rel)
    return out


def doc_texts(corpus: pd.DataFrame) -> list[str]:
    """What the encoder reads for a document: ``title + " " + text`` (the BEIR convention)."""
    titles = corpus.title.fillna("").astype(str)
    return (titles + " " + corpus.text.fillna("").astype(str)).str.strip().tolist()
