"""dataset.query_split: a seeded train/dev/test split of the judged queries of a test-only collection."""

import json

import pytest

from ehi.data.beir import load_beir
from ehi.data.dataset import SPLITS, Dataset
from ehi.data.manifest import write_manifest
from ehi.data.prepare import prepare_dataset
from ehi.data.query_split import ids_sha256, split_queries, split_record, split_sizes
from ehi.data.validate import DataError
from tests.data.test_beir import write_beir

N_QUERIES = 40
FRACTIONS = [0.5, 0.1, 0.4]


def write_test_only(tmp_path, n=N_QUERIES, unjudged=3):
    """A BEIR copy whose qrels have a test split only, some queries judged twice, some not at all."""
    docs = [{"_id": f"d{i}", "title": "", "text": f"doc {i}"} for i in range(10)]
    queries = [{"_id": f"q{i}", "text": f"query {i}"} for i in range(n + unjudged)]
    rows = [(f"q{i}", f"d{i % 10}", 1) for i in range(n)] + [(f"q{i}", f"d{(i + 1) % 10}", 2) for i in range(0, n, 3)]
    return write_beir(tmp_path / "test_only", docs=docs, queries=queries, qrels={"test": rows})


def ids_of(ds: Dataset, split: str) -> set[str]:
    return set(ds.queries.query_id[ds.queries.split == split])


def test_split_is_disjoint_covers_every_judged_query_and_moves_judgements_along(tmp_path):
    ds = load_beir(write_test_only(tmp_path))
    out = split_queries(ds, FRACTIONS, seed=1)
    parts = [ids_of(out, s) for s in SPLITS]
    assert [len(p) for p in parts] == [round(f * N_QUERIES) for f in FRACTIONS]
    assert set().union(*parts) == set(ds.qrels.query_id) and sum(map(len, parts)) == N_QUERIES  # disjoint cover
    assert len(out.qrels) == len(ds.qrels)
    for split, part in zip(SPLITS, parts):  # every judgement of a query is in its query's split
        assert set(out.qrels.query_id[out.qrels.split == split]) == part


def test_split_is_deterministic_in_its_seed_and_free_of_row_order(tmp_path):
    ds = load_beir(write_test_only(tmp_path))
    shuffled = Dataset(ds.name, ds.corpus, ds.queries.sample(frac=1, random_state=3), ds.qrels.sample(frac=1, random_state=4))
    first, again, reordered = (split_queries(d, FRACTIONS, seed=7) for d in (ds, ds, shuffled))
    for split in SPLITS:
        assert ids_of(first, split) == ids_of(again, split) == ids_of(reordered, split)
    assert ids_of(first, "train") != ids_of(split_queries(ds, FRACTIONS, seed=8), "train")


def test_rerun_of_preparation_gives_the_same_manifest_record(tmp_path):
    source = write_test_only(tmp_path)
    split = {"fractions": FRACTIONS, "seed": 5}
    cfg = {"name": "t", "source": "beir", "path": str(source), "query_split": split}
    records = []
    for run in ("a", "b"):
        ds = prepare_dataset("t", "beir", path=str(source), query_split=split)
        ds.write(tmp_path / run)
        manifest = write_manifest(cfg, tmp_path / run, ds.queries.split.value_counts().to_dict(),
                                  {"query_split": split_record(ds, **split)})
        records.append(json.loads(manifest.read_text())["query_split"])
    assert records[0] == records[1]
    assert records[0]["counts"] == {"train": 20, "dev": 4, "test": 16}
    ds = Dataset.read(tmp_path / "a")
    assert records[0]["query_ids_sha256"]["dev"] == ids_sha256(ds.queries.query_id[ds.queries.split == "dev"])
    assert records[0]["fractions"] == FRACTIONS and records[0]["seed"] == 5


def test_sizes_use_largest_remainders_and_sum_to_the_pool():
    # 3.5, 0.7, 2.8 -> floors 3, 0, 2; the two queries left go to the largest remainders (.8 and .7)
    assert split_sizes(7, [0.5, 0.1, 0.4]) == [3, 1, 3]
    assert sum(split_sizes(1001, [1 / 3, 1 / 3, 1 / 3])) == 1001


def test_refused_when_the_collection_has_a_train_split(tmp_path):
    ds = load_beir(write_beir(tmp_path / "with_train"))  # train and test qrels
    with pytest.raises(DataError, match=r"dataset\.query_split: .* already has a train split \(2 judged queries\)"):
        split_queries(ds, FRACTIONS)


def test_refused_when_a_split_would_be_empty(tmp_path):
    ds = load_beir(write_test_only(tmp_path))
    with pytest.raises(DataError, match=r"dataset\.query_split\.fractions: .* leave split\(s\) \['dev'\] empty"):
        split_queries(ds, [0.6, 0.0, 0.4])
    tiny = load_beir(write_test_only(tmp_path / "tiny", n=2, unjudged=0))
    with pytest.raises(DataError, match=r"dataset\.query_split\.fractions: .* of 2 judged queries leave split"):
        split_queries(tiny, FRACTIONS)


def test_refused_when_fractions_do_not_sum_to_one(tmp_path):
    ds = load_beir(write_test_only(tmp_path))
    with pytest.raises(DataError, match=r"dataset\.query_split\.fractions: \[0\.5, 0\.1, 0\.3\] sum to 0\.9, not 1"):
        split_queries(ds, [0.5, 0.1, 0.3])


def test_refused_beside_a_dev_carve(tmp_path):
    with pytest.raises(DataError, match=r"dataset\.query_split and dataset\.dev_fraction"):
        prepare_dataset("t", "beir", path=str(write_test_only(tmp_path)), dev_fraction=0.2, query_split={"fractions": FRACTIONS})


def test_refused_when_a_split_gets_no_relevant_judgement(tmp_path):
    docs = [{"_id": f"d{i}", "title": "", "text": f"doc {i}"} for i in range(10)]
    queries = [{"_id": f"q{i}", "text": f"query {i}"} for i in range(20)]
    rows = [("q0", "d0", 1)] + [(f"q{i}", f"d{i % 10}", 0) for i in range(1, 20)]  # one relevant judgement in all
    source = write_beir(tmp_path / "mostly_zero", docs=docs, queries=queries, qrels={"test": rows})
    with pytest.raises(DataError, match=r"dataset\.query_split of dataset 'zeros': split '(train|dev|test)' has no "
                                        r"relevant judgement \(relevance >= 1; found \d+ with relevance 0"):
        prepare_dataset("zeros", "beir", path=str(source), query_split={"fractions": FRACTIONS})
