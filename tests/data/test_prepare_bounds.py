"""Preparation bounds what later stages would choke on: texts longer than MAX_TEXT_CHARS are cut
(and counted in the log), a dataset name that is not one path component is refused."""

import logging

import pytest

from ehi.data.prepare import MAX_TEXT_CHARS, prepare_dataset
from ehi.data.validate import DataError
from tests.data.test_beir import write_beir


def test_a_huge_document_and_query_are_cut_and_counted(tmp_path, caplog):
    docs = [{"_id": f"d{i}", "title": "T", "text": f"doc {i}"} for i in range(5)]
    docs[3]["text"] = "word " * (MAX_TEXT_CHARS // 2)  # 2.5 x the bound
    queries = [{"_id": f"q{i}", "text": f"query {i}"} for i in range(4)]
    queries[1]["text"] = "q" * (MAX_TEXT_CHARS + 1)
    source = write_beir(tmp_path / "long", docs=docs, queries=queries)
    with caplog.at_level(logging.WARNING, logger="ehi.data.prepare"):
        ds = prepare_dataset("long", "beir", path=str(source))
    assert ds.corpus.text.str.len().max() == MAX_TEXT_CHARS and ds.queries.text.str.len().max() == MAX_TEXT_CHARS
    assert ds.corpus.text[ds.corpus.doc_id == "d0"].item() == "doc 0"  # short texts untouched
    said = caplog.text
    assert "1 corpus text(s) longer than 100000 characters cut to 100000 (longest 250000)" in said
    assert "1 queries text(s) longer than 100000 characters" in said


@pytest.mark.parametrize("name", [".", "..", "a/b", "x" * 101, ""])
def test_a_name_that_is_not_one_path_component_is_refused(tmp_path, name):
    with pytest.raises(DataError, match=r"dataset\.name .*: must be one path component"):
        prepare_dataset(name, "beir", path=str(write_beir(tmp_path / "copy")))
