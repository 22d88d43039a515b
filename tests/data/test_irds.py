"""``source: ir_datasets:<id>`` on a collection in ir_datasets' own formats (TSV documents and
queries, TREC qrels) registered for the test and downloaded by ir_datasets itself from 127.0.0.1:
its splits from the ``<id>/train`` and ``<id>/test`` ids, a second read from ir_datasets' cache
asking for nothing, and a one-line error naming the id and the cache when a file cannot be had."""

import random
import socket

import pytest

from ehi.data.download import DownloadError
from ehi.data.irds import split_ids
from ehi.data.prepare import prepare_dataset
from tests.data import source_fixtures as fx
from tests.data.served import serve

FILES = {
    "docs.tsv": fx.tsv((f"d{i}", fx.sentence(random.Random(i), 8)) for i in range(30)),
    "train-queries.tsv": fx.tsv((f"q{i}", f"train question {i}") for i in range(12)),
    "train-qrels": "".join(f"q{i} 0 d{i} 1\n" for i in range(12)).encode(),
    "test-queries.tsv": fx.tsv((f"t{i}", f"test question {i}") for i in range(4)),
    "test-qrels": "".join(f"t{i} 0 d{20 + i} {1 + i % 2}\n" for i in range(4)).encode(),
}


def register(monkeypatch, name: str, url: str, home) -> None:
    """A collection ``name`` with ``name/train`` and ``name/test`` whose files ir_datasets fetches from ``url``."""
    import ir_datasets
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecQrels, TsvDocs, TsvQueries
    from ir_datasets.util import Cache, RequestsDownload

    def cached(file):
        return Cache(RequestsDownload(url + file), home / file)

    grades = {1: "relevant", 2: "highly relevant"}
    table = {name: Dataset(TsvDocs(cached("docs.tsv"))),
             **{f"{name}/{s}": Dataset(TsvQueries(cached(f"{s}-queries.tsv")), TrecQrels(cached(f"{s}-qrels"), grades))
                for s in ("train", "test")}}
    for key, dataset in table.items():
        monkeypatch.setitem(ir_datasets.registry._registered, key, dataset)


def test_an_ir_datasets_collection_is_read_with_its_splits_then_from_its_cache(tmp_path, monkeypatch):
    with serve(FILES) as served:
        register(monkeypatch, "ehi-toy", served.url, tmp_path / "irds")
        ds = prepare_dataset("toy", "ir_datasets:ehi-toy", cache_dir=tmp_path / "cache")
        assert len(ds.corpus) == 30 and ds.queries.split.value_counts().to_dict() == {"train": 12, "test": 4}
        assert sorted(ds.qrels[ds.qrels.split == "test"].relevance) == [1, 1, 2, 2]
        assert sorted(served.requests) == sorted(FILES)
        prepare_dataset("toy", "ir_datasets:ehi-toy", cache_dir=tmp_path / "cache")
        assert len(served.requests) == len(FILES)  # the second read is ir_datasets' cache


def test_split_ids_follow_the_registry():
    registry = {"beir/fiqa", "beir/fiqa/train", "beir/fiqa/dev", "beir/fiqa/test", "msmarco-passage",
                "msmarco-passage/dev", "msmarco-passage/dev/small", "antique/test"}
    assert split_ids("beir/fiqa", registry) == {"train": "beir/fiqa/train", "dev": "beir/fiqa/dev", "test": "beir/fiqa/test"}
    assert split_ids("msmarco-passage", registry) == {"dev": "msmarco-passage/dev/small"}
    assert split_ids("antique/test", registry) == {"test": "antique/test"}
    assert split_ids("vaswani", registry) == {"test": "vaswani"}


def test_what_ir_datasets_cannot_fetch_is_one_line_naming_the_id_and_the_cache(tmp_path, monkeypatch):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/"
    monkeypatch.setenv("IR_DATASETS_DL_TRIES", "1")
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "irds"))
    register(monkeypatch, "ehi-offline", dead, tmp_path / "irds")
    with pytest.raises(DownloadError, match=rf"^ir_datasets:ehi-offline: cannot read its documents .*{tmp_path / 'irds'}") as err:
        prepare_dataset("off", "ir_datasets:ehi-offline", cache_dir=tmp_path / "cache")
    assert "\n" not in str(err.value)
    with pytest.raises(DownloadError, match=r"ir_datasets knows no id 'no/such-collection'"):
        prepare_dataset("x", "ir_datasets:no/such-collection")
