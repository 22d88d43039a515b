import json

import numpy as np
import pandas as pd
import pytest
from safetensors.numpy import save_file

from ehi.data.embeddings import load_embeddings, write_ids, write_qrels
from ehi.data.prepare import prepare_dataset
from ehi.data.validate import DataError


def _layout(root, n_docs=20, n_queries=6, dim=8, dtype=np.float32):
    rng = np.random.default_rng(0)
    root.mkdir(parents=True, exist_ok=True)
    np.save(root / "docs.npy", rng.standard_normal((n_docs, dim)).astype(dtype))
    np.save(root / "queries.npy", rng.standard_normal((n_queries, dim)).astype(dtype))
    write_ids(root / "doc_ids.txt", [f"d{i}" for i in range(n_docs)])
    write_ids(root / "query_ids.txt", [f"q{i}" for i in range(n_queries)])
    split = ["train", "train", "dev", "test", "test", "test"][:n_queries]
    write_qrels(root, pd.DataFrame({"query_id": [f"q{i}" for i in range(n_queries)],
                                    "doc_id": [f"d{2 * i}" for i in range(n_queries)], "relevance": 1, "split": split}))
    return root


def test_reads_ids_splits_and_row_keys(tmp_path):
    ds = load_embeddings(_layout(tmp_path / "e"), name="mine")
    assert ds.name == "mine" and ds.corpus.doc_id.tolist()[:2] == ["d0", "d1"]
    assert ds.corpus.text.tolist()[:2] == ["d:0", "d:1"] and ds.queries.text.tolist()[0] == "q:0"
    assert ds.queries.split.value_counts().to_dict() == {"test": 3, "train": 2, "dev": 1}


def test_safetensors_is_memory_mapped_and_equal_to_its_npy(tmp_path):
    root = _layout(tmp_path / "e", dtype=np.float16)
    from ehi.data.embeddings import load_arrays

    want, _ = load_arrays(root)
    want = np.array(want)
    save_file({"embeddings": want}, str(root / "docs.safetensors"))
    (root / "docs.npy").unlink()
    docs, _ = load_arrays(root)
    assert isinstance(docs, np.memmap) and docs.dtype == np.float16
    np.testing.assert_array_equal(docs, want)


def _break(root, what):
    rng = np.random.default_rng(1)
    if what == "nan":
        a = np.load(root / "docs.npy")
        a[3, 1] = np.nan
        np.save(root / "docs.npy", a)
    elif what == "int":
        np.save(root / "docs.npy", rng.integers(0, 5, (20, 8)))
    elif what == "width":
        np.save(root / "queries.npy", rng.standard_normal((6, 9)).astype(np.float32))
    elif what == "1d":
        np.save(root / "docs.npy", rng.standard_normal(20).astype(np.float32))
    elif what == "rows":
        write_ids(root / "doc_ids.txt", [f"d{i}" for i in range(19)])
    elif what == "dup":
        write_ids(root / "doc_ids.txt", ["d0"] * 2 + [f"d{i}" for i in range(2, 20)])
    elif what == "unknown":
        (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq3\tnope\t1\n")
    elif what == "both":
        save_file({"x": np.zeros((20, 8), np.float32)}, str(root / "docs.safetensors"))
    elif what == "two_tensors":
        (root / "queries.npy").unlink()
        save_file({"a": np.zeros((6, 8), np.float32), "b": np.zeros((6, 8), np.float32)}, str(root / "queries.safetensors"))
    elif what == "no_columns":
        np.save(root / "docs.npy", np.zeros((20, 0), np.float32))
        np.save(root / "queries.npy", np.zeros((6, 0), np.float32))
    elif what == "garbage":
        (root / "docs.npy").write_bytes(b"not an array")
    elif what == "validation":  # a split the reader has no name for: its judgements would be dropped
        (root / "qrels" / "validation.tsv").write_text("query-id\tcorpus-id\tscore\nq2\td4\t1\n")
    elif what == "huge_query":  # finite, but float32 cannot square it: a training query normalised to zeros
        rows = np.load(root / "queries.npy")
        rows[1, 0] = 3e38
        np.save(root / "queries.npy", rows)
    elif what in ("zero_doc", "zero_query"):
        kind = "docs" if what == "zero_doc" else "queries"
        rows = np.load(root / f"{kind}.npy")
        rows[2] = 0
        np.save(root / f"{kind}.npy", rows)


CASES = {"nan": "row 3 holds a NaN", "int": "dtype int64", "width": "same width", "1d": "shape (20,)",
         "rows": "19 ids for the 20 rows", "dup": "duplicate document", "unknown": "not in the corpus",
         "both": "both of docs.npy and docs.safetensors", "two_tensors": "holds 2 tensors", "garbage": "not a readable",
         "no_columns": "shape (20, 0)", "zero_doc": "docs.npy: row 2 is all zeros",
         "zero_query": "queries.npy: row 2 is all zeros",
         "validation": "qrels/validation.tsv: not read, the qrels files of a split are train.tsv, dev.tsv, test.tsv",
         "huge_query": "queries.npy: row 1 has norm 3e+38, above 1.84e+19: its squared norm overflows float32"}


@pytest.mark.parametrize("what", sorted(CASES))
def test_a_bad_file_is_refused_in_one_line_naming_it(tmp_path, what):
    root = _layout(tmp_path / "e")
    _break(root, what)
    with pytest.raises(DataError) as err:
        load_embeddings(root)
    message = str(err.value)
    assert CASES[what] in message and "\n" not in message and str(root) in message


def test_prepare_dataset_reads_the_source_by_name(tmp_path):
    ds = prepare_dataset("e", "embeddings", path=str(_layout(tmp_path / "e")))
    assert len(ds.corpus) == 20 and set(ds.queries.split) == {"train", "dev", "test"}
    assert json.dumps(ds.corpus.text.tolist()[:1]) == '["d:0"]'
