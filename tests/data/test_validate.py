"""Every bad-input case gives a DataError naming the file and line or key, or a counted warning."""

import json
import logging
import re
from pathlib import Path

import pandas as pd
import pytest

from ehi.data.beir import load_beir
from ehi.data.dataset import Dataset
from ehi.data.validate import DataError, check_dataset

DOCS = [{"_id": f"d{i}", "title": f"T{i}", "text": f"doc {i}"} for i in range(4)]
QUERIES = [{"_id": f"q{i}", "text": f"query {i}"} for i in range(3)]
QRELS = {"train": "q0\td0\t1\nq1\td1\t1\n", "test": "q2\td2\t1\n"}
HEADER = "query-id\tcorpus-id\tscore\n"


def beir(root: Path, docs=DOCS, queries=QUERIES, qrels=QRELS, raw_qrels=None, corpus_text=None, queries_text=None) -> Path:
    """A BEIR directory. qrels: split -> body under the header; raw_qrels: split -> whole file;
    ``*_text``: raw contents of the JSONL files."""
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text(corpus_text if corpus_text is not None else "".join(json.dumps(d) + "\n" for d in docs))
    (root / "queries.jsonl").write_text(queries_text if queries_text is not None else "".join(json.dumps(q) + "\n" for q in queries))
    files = {split: HEADER + body for split, body in qrels.items()} | (raw_qrels or {})
    for split, text in files.items():
        (root / "qrels" / f"{split}.tsv").write_text(text)
    return root


def test_clean_fixture_loads(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="ehi.data"):
        ds = load_beir(beir(tmp_path / "ok"))
    assert len(ds.queries) == 3 and caplog.text == ""


def test_malformed_jsonl_line_names_file_and_line(tmp_path):
    text = json.dumps(DOCS[0]) + "\n" + json.dumps(DOCS[1]) + "\n" + '{"_id": "d2", "text": "unterminated\n'
    with pytest.raises(DataError, match=r"corpus\.jsonl, line 3: malformed JSON"):
        load_beir(beir(tmp_path / "x", corpus_text=text))


def test_non_object_jsonl_line(tmp_path):
    with pytest.raises(DataError, match=r"queries\.jsonl, line 1: expected a JSON object"):
        load_beir(beir(tmp_path / "x", queries_text='["q0", "text"]\n'))


def test_missing_id(tmp_path):
    queries = [QUERIES[0], {"text": "no id here"}, QUERIES[2]]
    with pytest.raises(DataError, match=r"queries\.jsonl, line 2: missing key '_id'"):
        load_beir(beir(tmp_path / "x", queries=queries))


def test_not_utf8(tmp_path):
    root = beir(tmp_path / "x")
    (root / "corpus.jsonl").write_bytes(b'{"_id": "d0", "text": "ok"}\n{"_id": "d1", "text": "\xff\xfe"}\n')
    with pytest.raises(DataError, match=r"corpus\.jsonl, line 2: not UTF-8"):
        load_beir(root)


def test_duplicate_doc_ids(tmp_path):
    docs = DOCS + [dict(DOCS[1], text="again"), dict(DOCS[2]), dict(DOCS[2])]
    with pytest.raises(DataError, match=r"corpus\.jsonl: 2 duplicate document id\(s\), e\.g\. 'd1', 'd2'"):
        load_beir(beir(tmp_path / "x", docs=docs))


def test_duplicate_query_ids(tmp_path):
    with pytest.raises(DataError, match=r"queries\.jsonl: 1 duplicate query id\(s\), e\.g\. 'q0'"):
        load_beir(beir(tmp_path / "x", queries=QUERIES + [QUERIES[0]]))


def test_qrels_wrong_header(tmp_path):
    raw = {"test": "qid\tdocid\trel\nq2\td2\t1\n"}
    with pytest.raises(DataError, match=r"qrels/test\.tsv, line 1: header is 'qid\\tdocid\\trel'; expected 'query-id\\tcorpus-id\\tscore'"):
        load_beir(beir(tmp_path / "x", raw_qrels=raw))


def test_qrels_without_header_is_read_and_counted(tmp_path, caplog):
    # a qrels file without BEIR's header line is read (its line 1 is a judgement), not refused
    with caplog.at_level(logging.INFO, logger="ehi.data"):
        ds = load_beir(beir(tmp_path / "x", raw_qrels={"train": "q0\td0\t1\n"}))
    assert set(ds.qrels.query_id[ds.qrels.split == "train"]) == {"q0"}
    assert re.search(r"qrels/train\.tsv: no header line", caplog.text)


def test_qrels_wrong_column_count(tmp_path):
    qrels = {"train": "q0\td0\t1\nq1\td1\n", "test": QRELS["test"]}
    with pytest.raises(DataError, match=r"qrels/train\.tsv, line 3: expected 3 columns, found 2"):
        load_beir(beir(tmp_path / "x", qrels=qrels))


def test_qrels_non_integer_score(tmp_path):
    qrels = {"train": "q0\td0\thigh\n", "test": QRELS["test"]}
    with pytest.raises(DataError, match=r"qrels/train\.tsv, line 2: relevance 'high' is not an integer"):
        load_beir(beir(tmp_path / "x", qrels=qrels))


def test_qrels_relevance_beyond_32_bits(tmp_path):
    qrels = {"train": "q0\td0\t99999999999\n", "test": QRELS["test"]}
    with pytest.raises(DataError, match=r"qrels/train\.tsv, line 2: relevance 99999999999 is outside the 32-bit"):
        load_beir(beir(tmp_path / "x", qrels=qrels))


def test_qrels_unknown_document_is_an_error(tmp_path):
    qrels = {"train": "q0\td0\t1\nq1\tghost\t1\nq1\tghost2\t1\n", "test": QRELS["test"]}
    with pytest.raises(DataError, match=r"qrels/train\.tsv: 2 judgement\(s\) name documents not in the corpus, e\.g\. .*'ghost'"):
        load_beir(beir(tmp_path / "x", qrels=qrels))


def test_qrels_unknown_query_is_an_error(tmp_path):
    qrels = {"train": QRELS["train"], "test": "q2\td2\t1\nq9\td2\t1\n"}
    with pytest.raises(DataError, match=r"qrels/test\.tsv: 1 judged query id\(s\) not in the queries, e\.g\. 'q9'"):
        load_beir(beir(tmp_path / "x", qrels=qrels))


def test_query_in_two_splits(tmp_path):
    qrels = {"train": QRELS["train"], "test": "q2\td2\t1\nq1\td3\t1\n"}
    with pytest.raises(DataError, match=r"1 query\(ies\) judged in two splits, e\.g\. 'q1' in .*train\.tsv and .*test\.tsv"):
        load_beir(beir(tmp_path / "x", qrels=qrels))


def test_conflicting_and_repeated_judgements(tmp_path, caplog):
    clash = {"train": "q0\td0\t1\nq0\td0\t2\nq1\td1\t1\n", "test": QRELS["test"]}
    with pytest.raises(DataError, match=r"qrels/train\.tsv: conflicting relevance for \(query, doc\) \('q0', 'd0'\)"):
        load_beir(beir(tmp_path / "x", qrels=clash))
    repeat = {"train": "q0\td0\t1\nq0\td0\t1\nq1\td1\t1\n", "test": QRELS["test"]}
    with caplog.at_level(logging.WARNING, logger="ehi.data"):
        ds = load_beir(beir(tmp_path / "y", qrels=repeat))
    assert "train.tsv: 1 repeated identical judgement(s) kept once" in caplog.text
    assert len(ds.qrels) == 3


def test_empty_document_is_a_counted_warning(tmp_path, caplog):
    docs = DOCS + [{"_id": "e1", "title": "", "text": "  "}, {"_id": "e2"}]
    with caplog.at_level(logging.WARNING, logger="ehi.data"):
        ds = load_beir(beir(tmp_path / "x", docs=docs))
    assert "2 document(s) with empty title and text (kept), e.g. 'e1', 'e2'" in caplog.text
    assert len(ds.corpus) == 6


def test_empty_query_text_is_an_error(tmp_path):
    queries = QUERIES[:2] + [{"_id": "q2", "text": " "}]
    with pytest.raises(DataError, match=r"queries\.jsonl: 1 query\(ies\) with empty text, e\.g\. 'q2'"):
        load_beir(beir(tmp_path / "x", queries=queries))


def test_unjudged_queries_are_a_counted_warning(tmp_path, caplog):
    queries = QUERIES + [{"_id": f"u{i}", "text": "lonely"} for i in range(4)]
    with caplog.at_level(logging.WARNING, logger="ehi.data"):
        ds = load_beir(beir(tmp_path / "x", queries=queries))
    assert "queries.jsonl: 4 query(ies) without judgements left out of every split" in caplog.text
    assert len(ds.queries) == 3


def test_split_file_without_queries_is_an_error(tmp_path):
    with pytest.raises(DataError, match=r"qrels/dev\.tsv: split 'dev' has no judged queries"):
        load_beir(beir(tmp_path / "x", raw_qrels={"dev": HEADER}))


def test_empty_corpus_is_an_error(tmp_path):
    with pytest.raises(DataError, match=r"corpus\.jsonl: the corpus is empty"):
        load_beir(beir(tmp_path / "x", corpus_text="\n"))


def test_check_dataset_catches_split_mismatch():
    corpus = pd.DataFrame({"doc_id": ["d0", "d1"], "title": ["", ""], "text": ["a", "b"]})
    queries = pd.DataFrame({"query_id": ["q0", "q1"], "text": ["x", "y"], "split": ["train", "train"]})
    qrels = pd.DataFrame({"query_id": ["q0", "q1"], "doc_id": ["d0", "d1"], "relevance": [1, 1], "split": ["train", "test"]})
    assert len(check_dataset(Dataset("ok", corpus, queries.assign(split=["train", "test"]), qrels)).queries) == 2
    with pytest.raises(DataError, match=r"bad: 1 query\(ies\) whose split differs from their qrels' split, e\.g\. 'q1'"):
        check_dataset(Dataset("bad", corpus, queries, qrels))
    with pytest.raises(DataError, match="unknown split 'valid'"):
        check_dataset(Dataset("bad", corpus, queries, qrels.assign(split="valid")))


@pytest.mark.parametrize("bad_id", [None, "", "  ", True, 1.5, [1], {"id": 1}])
def test_an_id_must_be_a_non_empty_string_or_an_integer(tmp_path, bad_id):
    docs = DOCS + [{"_id": bad_id, "title": "", "text": "x"}]  # line 5 of corpus.jsonl
    with pytest.raises(DataError, match=r"corpus\.jsonl, line 5: '_id' must be a non-empty string or an integer"):
        load_beir(beir(tmp_path / "x", docs=docs))
    queries = [{"_id": bad_id, "text": "q"}] + QUERIES
    with pytest.raises(DataError, match=r"queries\.jsonl, line 1: '_id' must be a non-empty string or an integer"):
        load_beir(beir(tmp_path / "y", queries=queries))


def test_integer_ids_read_as_strings_and_texts_must_be_strings(tmp_path):
    docs = DOCS + [{"_id": 7, "title": None, "text": "seven"}]  # a null title reads as empty, like a missing one
    ds = load_beir(beir(tmp_path / "ok", docs=docs))
    assert ds.corpus.doc_id.tolist()[-1] == "7" and ds.corpus.title.tolist()[-1] == ""
    for field, value in (("title", 3), ("text", ["a", "b"])):
        bad = DOCS + [{"_id": "d9", "title": "t", "text": "x", field: value}]
        with pytest.raises(DataError, match=rf"corpus\.jsonl, line 5: '{field}' must be a string, got"):
            load_beir(beir(tmp_path / field, docs=bad))
    with pytest.raises(DataError, match=r"queries\.jsonl, line 2: 'text' must be a string, got int"):
        load_beir(beir(tmp_path / "q", queries=[QUERIES[0], {"_id": "q1", "text": 12}, QUERIES[2]]))
