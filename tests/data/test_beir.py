"""Local BEIR directories (fixtures written here, plus the real SciFact copy) and the seeded dev carve."""

import json
import logging
import os
from pathlib import Path

import pandas as pd
import pytest

from ehi.data.beir import load_beir
from ehi.data.dataset import Dataset
from ehi.data.splits import carve_dev
from ehi.data.validate import DataError
from ehi.core.io import read_table

SCIFACT = Path(os.environ.get("EHI_SCIFACT_PATH", Path(__file__).parents[2] / ".." / "shared" / "data" / "scifact")).resolve()


def write_beir(root: Path, docs=None, queries=None, qrels=None) -> Path:
    """A BEIR directory in the published layout; qrels maps split -> [(qid, did, score)]."""
    docs = docs if docs is not None else [{"_id": f"d{i}", "title": f"T{i}", "text": f"doc {i}"} for i in range(5)]
    queries = queries if queries is not None else [{"_id": f"q{i}", "text": f"query {i}", "metadata": {}} for i in range(4)]
    qrels = qrels if qrels is not None else {"train": [("q0", "d0", 1), ("q0", "d1", 2), ("q1", "d2", 1)], "test": [("q2", "d3", 1)]}
    (root / "qrels").mkdir(parents=True, exist_ok=True)
    (root / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (root / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    for split, rows in qrels.items():
        body = "".join(f"{q}\t{d}\t{s}\n" for q, d, s in rows)
        (root / "qrels" / f"{split}.tsv").write_text("query-id\tcorpus-id\tscore\n" + body)
    return root


def test_load_beir_assigns_splits_and_keeps_order(tmp_path, caplog):
    root = write_beir(tmp_path / "toy")
    with caplog.at_level(logging.WARNING, logger="ehi.data"):
        ds = load_beir(root)
    assert ds.name == "toy"
    assert list(ds.corpus.doc_id) == [f"d{i}" for i in range(5)]
    assert dict(zip(ds.queries.query_id, ds.queries.split)) == {"q0": "train", "q1": "train", "q2": "test"}
    assert ds.qrels.values.tolist() == [
        ["q0", "d0", 1, "train"], ["q0", "d1", 2, "train"], ["q1", "d2", 1, "train"], ["q2", "d3", 1, "test"]
    ]
    # q3 is judged nowhere: left out, and said so with the count
    assert "1 query(ies) without judgements" in caplog.text and "'q3'" in caplog.text


def test_load_beir_writes_schema_tables(tmp_path):
    ds = load_beir(write_beir(tmp_path / "toy"), name="renamed")
    paths = ds.write(tmp_path / "out")
    back = Dataset.read(tmp_path / "out", name="renamed")
    assert back.qrels.relevance.dtype.name == "int32"
    assert read_table(paths["queries"], "queries").shape == (3, 3)
    pd.testing.assert_frame_equal(back.corpus, ds.corpus, check_dtype=False)


def test_load_beir_splits_argument(tmp_path):
    root = write_beir(tmp_path / "toy")
    ds = load_beir(root, splits=["test"])
    assert set(ds.queries.split) == {"test"} and len(ds.qrels) == 1
    with pytest.raises(DataError, match=r"qrels/dev.tsv: qrels file of requested split 'dev' not found"):
        load_beir(root, splits=["dev"])
    with pytest.raises(DataError, match="unknown split 'valid'"):
        load_beir(root, splits=["valid"])


def test_load_beir_missing_files(tmp_path):
    with pytest.raises(DataError, match="not a directory"):
        load_beir(tmp_path / "nowhere")
    root = write_beir(tmp_path / "toy")
    for f in (root / "qrels").iterdir():
        f.unlink()
    with pytest.raises(DataError, match="no qrels file"):
        load_beir(root)
    (root / "queries.jsonl").unlink()
    with pytest.raises(DataError, match=r"queries.jsonl: not found"):
        load_beir(root)


@pytest.mark.skipif(not (SCIFACT / "corpus.jsonl").is_file(), reason=f"no SciFact copy at {SCIFACT} (set EHI_SCIFACT_PATH)")
def test_real_scifact_counts():
    ds = load_beir(SCIFACT)
    assert ds.name == "scifact"
    assert len(ds.corpus) == 5183
    assert ds.queries.split.value_counts().to_dict() == {"train": 809, "test": 300}
    assert ds.qrels.split.value_counts().to_dict() == {"train": 919, "test": 339}
    dev = carve_dev(ds, fraction=0.1, seed=0)
    assert dev.queries.split.value_counts().to_dict() == {"train": 728, "test": 300, "dev": 81}


# ---- carve_dev ---------------------------------------------------------------------------------


def _many(tmp_path, n=40):
    queries = [{"_id": f"q{i}", "text": f"query {i}"} for i in range(n)]
    qrels = {"train": [(f"q{i}", f"d{i % 5}", 1) for i in range(n - 5)] + [("q0", "d4", 1)],
             "test": [(f"q{i}", "d0", 1) for i in range(n - 5, n)]}
    return load_beir(write_beir(tmp_path / "many", queries=queries, qrels=qrels))


def test_carve_dev_moves_queries_and_qrels(tmp_path):
    ds = _many(tmp_path)
    out = carve_dev(ds, fraction=0.2, seed=3)
    dev_q = set(out.queries.query_id[out.queries.split == "dev"])
    assert len(dev_q) == 7  # round(0.2 * 35)
    assert set(out.qrels.query_id[out.qrels.split == "dev"]) == dev_q
    assert not (out.queries.split == "test").ne(ds.queries.split == "test").any()  # test untouched
    assert len(out.qrels) == len(ds.qrels)
    if "q0" in dev_q:  # both judgements of a query move together
        assert (out.qrels.split[out.qrels.query_id == "q0"] == "dev").all()


def test_carve_dev_is_deterministic_and_order_free(tmp_path):
    ds = _many(tmp_path)
    shuffled = Dataset(ds.name, ds.corpus, ds.queries.sample(frac=1, random_state=1), ds.qrels.sample(frac=1, random_state=2))
    pick = lambda d: sorted(d.queries.query_id[d.queries.split == "dev"])  # noqa: E731
    assert pick(carve_dev(ds, n=5, seed=7)) == pick(carve_dev(ds, n=5, seed=7)) == pick(carve_dev(shuffled, n=5, seed=7))
    assert pick(carve_dev(ds, n=5, seed=7)) != pick(carve_dev(ds, n=5, seed=8))


def test_carve_dev_arguments(tmp_path):
    ds = _many(tmp_path)
    assert carve_dev(ds, fraction=0.0) is ds
    with pytest.raises(ValueError, match="exactly one of fraction or n"):
        carve_dev(ds, fraction=0.1, n=3)
    with pytest.raises(DataError, match="cannot move 35 of 35"):
        carve_dev(ds, n=35)
    with pytest.raises(DataError, match="split 'dev' already has 3 queries"):
        carve_dev(carve_dev(ds, n=3), n=2)


def test_files_outside_the_layout_are_named_in_the_log(tmp_path, caplog):
    root = write_beir(tmp_path / "toy", qrels={"train": [("q0", "d0", 1)], "validation": [("q1", "d1", 1)]})
    (root / "notes.txt").write_text("mine")
    (root / ".snakemake_timestamp").write_text("")  # a tool's hidden file (a directory() output's): not named
    with caplog.at_level(logging.WARNING, logger="ehi.data"):
        ds = load_beir(root)
    assert set(ds.queries.split) == {"train"}  # validation.tsv is no split: not read, but named
    said = [r.getMessage() for r in caplog.records if "not read" in r.getMessage()]
    assert said == [f"{root}: not read, outside the BEIR layout (corpus.jsonl, queries.jsonl, qrels/train.tsv, "
                    "qrels/dev.tsv, qrels/test.tsv): notes.txt, qrels/validation.tsv"]
    caplog.clear()
    (root / "notes.txt").unlink()
    (root / "qrels" / "validation.tsv").unlink()
    with caplog.at_level(logging.WARNING, logger="ehi.data"):
        load_beir(root)
    assert "not read" not in caplog.text  # the published layout alone: nothing to name
