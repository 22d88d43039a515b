"""Messy but valid BEIR inputs: each shape is read as meant and counted in the log, nothing dropped.

One small collection written in every shape at once (CRLF line ends, one qrels file with its header
and one without, relevance 0, graded and negative relevance, a query without judgements, a document
with empty title and text, ids that are JSON numbers in the JSONL files and text in the qrels), plus
one test per shape.
"""

import json
import logging
import re
from collections import Counter

import pytest

from ehi.data.beir import load_beir, read_corpus, read_qrels
from ehi.data.input_counts import InputCounts

HEADER = "query-id\tcorpus-id\tscore"
DOCS = [{"_id": 1, "title": "One", "text": "first"}, {"_id": 2, "title": "", "text": ""},
        {"_id": "d3", "title": "Three", "text": "third"}, {"_id": 4, "text": "no title key"}]
QUERIES = [{"_id": 10, "text": "q ten"}, {"_id": "11", "text": "q eleven"}, {"_id": 12, "text": "never judged"}]
TRAIN = [("10", "1", 2), ("10", "2", 0), ("10", "d3", -1)]  # graded, zero and negative
TEST = [("11", "d3", 1), ("11", "4", 0)]


def write_lines(path, lines, eol):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes("".join(line + eol for line in lines).encode())


def messy(root, eol="\r\n"):
    write_lines(root / "corpus.jsonl", [json.dumps(d) for d in DOCS], eol)
    write_lines(root / "queries.jsonl", [json.dumps(q) for q in QUERIES], eol)
    write_lines(root / "qrels" / "train.tsv", [HEADER] + ["\t".join(map(str, r)) for r in TRAIN], eol)
    write_lines(root / "qrels" / "test.tsv", ["\t".join(map(str, r)) for r in TEST], eol)  # no header
    return root


def test_every_shape_at_once_reads_right_and_is_counted(tmp_path, caplog):
    root = messy(tmp_path / "messy")
    with caplog.at_level(logging.INFO, logger="ehi.data"):
        ds = load_beir(root)
    # ids: JSON numbers read as the text the qrels use; no stray "\r" anywhere
    assert list(ds.corpus.doc_id) == [str(d["_id"]) for d in DOCS]
    assert not ds.corpus.text.str.contains("\r").any() and not ds.qrels.doc_id.str.contains("\r").any()
    judged = {q for q, _, _ in TRAIN + TEST}
    assert set(ds.queries.query_id) == judged  # the unjudged query is left out of every split ...
    assert re.search(r"1 query\(ies\) without judgements left out of every split, e.g. '12'", caplog.text)  # ... counted
    # every judgement kept with its grade, in its split
    got = sorted(zip(ds.qrels.query_id, ds.qrels.doc_id, ds.qrels.relevance.astype(int), ds.qrels.split))
    want = sorted([(*r, "train") for r in TRAIN] + [(*r, "test") for r in TEST])
    assert got == want
    assert re.search(r"1 document\(s\) with empty title and text \(kept\), e.g. '2'", caplog.text)
    numeric_docs = sum(isinstance(d["_id"], int) for d in DOCS)
    assert f"corpus.jsonl: {len(DOCS)} line(s) with CRLF ends (read as LF); {numeric_docs} id(s) given as JSON numbers" in caplog.text
    assert f"test.tsv: {len(TEST)} line(s) with CRLF ends (read as LF); no header line" in caplog.text
    assert f"train.tsv: {len(TRAIN) + 1} line(s) with CRLF ends" in caplog.text  # the header line too


def test_crlf_is_counted_per_file_and_lf_is_not(tmp_path):
    counts = InputCounts()
    write_lines(tmp_path / "crlf.jsonl", [json.dumps(d) for d in DOCS], "\r\n")
    write_lines(tmp_path / "lf.jsonl", [json.dumps(d) for d in DOCS], "\n")
    crlf, lf = read_corpus(tmp_path / "crlf.jsonl", counts), read_corpus(tmp_path / "lf.jsonl", counts)
    assert crlf.equals(lf)
    assert counts.of(tmp_path / "crlf.jsonl")["crlf_lines"] == len(DOCS)
    assert counts.of(tmp_path / "lf.jsonl")["crlf_lines"] == 0


@pytest.mark.parametrize("header", [True, False])
def test_qrels_with_or_without_header_read_the_same(tmp_path, header):
    counts = InputCounts()
    path = tmp_path / "qrels.tsv"
    write_lines(path, [HEADER] * header + ["\t".join(map(str, r)) for r in TRAIN], "\n")
    qrels = read_qrels(path, counts)
    assert list(zip(qrels.query_id, qrels.doc_id, qrels.relevance.astype(int))) == TRAIN
    assert counts.of(path)["no_header"] == (not header)


def test_relevance_grades_are_kept_and_counted(tmp_path):
    counts = InputCounts()
    path = tmp_path / "qrels.tsv"
    rows = TRAIN + [("11", "d3", 2), ("12", "1", 0)]
    write_lines(path, [HEADER] + ["\t".join(map(str, r)) for r in rows], "\n")
    qrels = read_qrels(path, counts)
    expected = dict(sorted(Counter(r for _, _, r in rows).items()))
    assert counts.grades(path) == expected
    assert sorted(qrels.relevance.astype(int)) == sorted(r for _, _, r in rows)
    line = counts.lines()[0]
    assert f"judgements per relevance grade {expected} ({expected[0]} at 0 and {expected[-1]} negative, kept as given)" in line


def test_integer_ids_in_jsonl_match_string_ids_in_qrels(tmp_path):
    root = messy(tmp_path / "ints", eol="\n")
    ds = load_beir(root)
    # qrels say "1" and "4"; the corpus said 1 and 4 (JSON numbers): the judgements found their documents
    assert {"1", "4"} <= set(ds.qrels.doc_id) <= set(ds.corpus.doc_id)
    assert {"10", "11"} == set(ds.queries.query_id)


def test_clean_files_report_only_their_grades(tmp_path):
    counts = InputCounts()
    write_lines(tmp_path / "c.jsonl", [json.dumps({"_id": "a", "text": "x"})], "\n")
    read_corpus(tmp_path / "c.jsonl", counts)
    assert counts.lines() == []
