"""TREC run files (``qid Q0 docid rank score tag``), the format trec_eval, ir_measures and ranx read.

A ``run`` Parquet table holds every budget of one system's sweep; a TREC run file holds one ranked
list per query, so each search (one budget) becomes its own file, tagged with the system and the
budget (``ehi+tree@beam=8``).

Scores: trec_eval and every library that reads its format rank by score, not by the rank column,
and break ties by document id. Our metrics rank by the searcher's order (``ehi.evaluate.metrics``),
so the score written is the searcher's score where it is strictly decreasing down a query's list,
and is otherwise lowered just enough (one float32 step, ``numpy.nextafter``) to keep the searcher's
order: equal or out-of-order scores (duplicate documents, approximate scores of a compressed
index) would otherwise be reordered by the reader and move its metrics off ours. Float32 steps,
because pytrec_eval (ir_measures' trec_eval) compares scores at float32 precision.

Queries that retrieved nothing (a small beam can visit only empty leaves) have no line in a run
file: the format has no way to say "this query was searched and found nothing". The pipeline's
metrics score such a judged query 0, and so does ``trec_eval -c`` (average over the qrels' queries,
0 for one missing from the run); plain ``trec_eval`` averages over the run's queries only and
comes out higher. So the qrels are written beside the runs (:func:`write_trec_qrels`: the
evaluation split's relevant judgements, the queries the pipeline averages over), the count of
judged queries missing from each run is returned (and logged by the rule), and
:data:`TREC_EVAL_COMMAND` is the call that agrees with the pipeline.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ehi.core.errors import DataError
from ehi.core.io import atomic_path
from ehi.data.judgements import relevant
from ehi.core.ranking import GROUP  # not through ehi.evaluate.metrics: `ehi search` needs no ranx

QRELS_FILE = "qrels.txt"
# -c: average over every query of the qrels (0 for one the run lacks), as the pipeline's metrics do
TREC_EVAL_COMMAND = "trec_eval -c -m ndcg_cut.10 -m recall.100 {qrels} {run}"

COLUMNS = ["query_id", "Q0", "doc_id", "rank", "score", "tag"]
_UNSAFE = re.compile(r"[\s\x00-\x1f\x7f]")  # whitespace or a control character: no id in a run may hold one


def tag(system: str, budget_param: str, budget_value: float) -> str:
    """The run tag naming one search: ``<system>@<budget_param>=<value>``."""
    return f"{system}@{budget_param}={float(budget_value):g}"


def monotone_scores(scores: np.ndarray) -> np.ndarray:
    """``scores`` (one query's, in rank order) made strictly decreasing with the least change."""
    out = np.asarray(scores, dtype=np.float32).copy()
    if np.all(np.diff(out) < 0):
        return out
    for i in range(1, len(out)):
        if not out[i] < out[i - 1]:
            out[i] = np.nextafter(out[i - 1], np.float32(-np.inf))
    return out


def _check_ids(run: pd.DataFrame, columns=("query_id", "doc_id"), where: str = "") -> None:
    for column in columns:
        bad = run[column].astype(str).str.contains(_UNSAFE)
        if bad.any():
            value = run.loc[bad, column].iloc[0]
            raise DataError(f"{where}{column} {value!r} holds whitespace or a control character, which a "
                            f"TREC run file cannot carry ({int(bad.sum())} such)")


def check_doc_ids(doc_ids: list[str], where: str) -> None:
    """Every document id of an index fits a TREC line, checked before the first line is written."""
    _check_ids(pd.DataFrame({"doc_id": doc_ids}), ("doc_id",), f"{where}: ")


def trec_lines(run: pd.DataFrame, run_tag: str) -> list[str]:
    """The lines of one search's ranking (``run`` table rows of a single budget), ranks from 1."""
    _check_ids(run)
    lines = []
    for query_id, hits in run.sort_values(["query_id", "rank"], kind="stable").groupby("query_id", sort=False):
        scores = monotone_scores(hits.score.to_numpy())
        for rank, (doc_id, score) in enumerate(zip(hits.doc_id, scores), 1):
            lines.append(f"{query_id} Q0 {doc_id} {rank} {float(score)!r} {run_tag}")
    return lines


def write_trec_runs(run: pd.DataFrame, out_dir: str | os.PathLike) -> list[Path]:
    """One TREC file per search of ``run`` (a system's sweep): ``<budget_param>=<value>.trec``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for (system, _variant, param, value), group in run.groupby(GROUP, sort=False):
        path = out_dir / f"{param}={float(value):g}.trec"
        lines = trec_lines(group, tag(system, param, value))
        with atomic_path(path) as tmp:
            tmp.write_text("".join(line + "\n" for line in lines))
        paths.append(path)
    return paths


def judged_without_results(run: pd.DataFrame, qrels: pd.DataFrame) -> dict[str, int]:
    """Per search of ``run`` (file stem ``<budget_param>=<value>``): judged queries of ``qrels`` it
    returned nothing for (no line in its TREC file; 0 in the pipeline's metrics and in trec_eval -c)."""
    judged = set(relevant(qrels).query_id.astype(str))
    return {f"{param}={float(value):g}": len(judged - set(group.query_id.astype(str)))
            for (_system, _variant, param, value), group in run.groupby(GROUP, sort=False)}


def qrels_lines(qrels: pd.DataFrame) -> list[str]:
    """TREC qrels lines (``qid 0 docid relevance``) of the relevant judgements: the judged queries
    are exactly those the pipeline's metrics average over."""
    _check_ids(qrels)
    rel = relevant(qrels).sort_values(["query_id", "doc_id"], kind="stable")
    return [f"{q} 0 {d} {int(r)}" for q, d, r in zip(rel.query_id.astype(str), rel.doc_id.astype(str), rel.relevance)]


def write_trec_qrels(qrels: pd.DataFrame, path: str | os.PathLike) -> Path:
    """``qrels`` (one split's judgements) as a TREC qrels file, written whole or not at all."""
    with atomic_path(path) as tmp:
        tmp.write_text("".join(line + "\n" for line in qrels_lines(qrels)))
    return Path(path)


def read_trec(path: str | os.PathLike) -> pd.DataFrame:
    """A TREC run file as a frame of :data:`COLUMNS` (ids as text, scores float64)."""
    return pd.read_csv(path, sep=r"\s+", header=None, names=COLUMNS, dtype={"query_id": str, "doc_id": str})


# the rule ``ehi search --format trec`` states in its --help
QID_RULE = ("a line 'qid<TAB>text' gives its qid (no whitespace or control character, text after the "
            "tab), a line without a tab its line number; every qid once")


def query_id_and_text(line_no: int, line: str, where: str = "queries") -> tuple[str, str]:
    """A query line ``qid<TAB>text`` (BEIR's and MS MARCO's queries.tsv) or plain text, whose qid
    is then its 1-based line number (:data:`QID_RULE`). A tab line with an empty or unsafe qid, or
    no text, is a DataError naming ``where`` and the line: it would otherwise become another qid."""
    qid, tab, text = line.partition("\t")
    if not tab:
        return str(line_no), line.strip()
    qid, text = qid.strip(), text.strip()
    if not qid or _UNSAFE.search(qid):
        raise DataError(f"{where}, line {line_no}: qid {qid!r} before the tab is empty or holds whitespace "
                        "or a control character")
    if not text:
        raise DataError(f"{where}, line {line_no}: qid {qid!r} has no query text after the tab")
    return qid, text


class UniqueQueryIds:
    """Called on each (line number, line) of a query source: its qid, refused when an earlier line
    had it (two rankings under one qid would merge in any TREC reader), naming both lines."""

    def __init__(self, where: str):
        self.where, self.seen = where, {}

    def __call__(self, line_no: int, line: str) -> str:
        qid, _ = query_id_and_text(line_no, line, self.where)
        if qid in self.seen:
            raise DataError(f"{self.where}, line {line_no}: qid {qid!r} repeats line {self.seen[qid]}'s; "
                            "a TREC run needs each qid once")
        self.seen[qid] = line_no
        return qid


def hit_lines(query_id: str, hits, run_tag: str) -> list[str]:
    """TREC lines of one query's hits (objects with ``doc_id`` and ``score``, best first)."""
    frame = pd.DataFrame({"query_id": query_id, "doc_id": [h.doc_id for h in hits],
                          "rank": range(1, len(hits) + 1), "score": [h.score for h in hits]})
    return trec_lines(frame, run_tag) if len(frame) else []
