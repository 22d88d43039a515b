"""``source: ir_datasets:<id>``: any collection the ir_datasets package knows, as a Dataset.

ir_datasets downloads, verifies and caches its files itself (under ``IR_DATASETS_HOME``, default
``~/.ir_datasets``), so every BEIR and TREC collection it lists is one config line. The splits:
where ``<id>/train``, ``<id>/dev`` (or ``<id>/dev/small``) and ``<id>/test`` exist, each gives the
queries and judgements of its split and ``<id>`` the documents (``beir/fiqa``, ``beir/scifact``);
otherwise ``<id>`` gives everything and its judgements form the split its last part names (train,
dev or test), else test, which ``dataset.query_split`` can divide. Offline, what the cache holds
is read; a missing file is a one-line error naming the id and the cache.
"""

from __future__ import annotations

import logging
import os

import pandas as pd

from ehi.data.dataset import Dataset
from ehi.data.sources import IR_DATASETS_PREFIX
from ehi.data.download import DownloadError
from ehi.data.validate import assemble

log = logging.getLogger("ehi.data")

PREFIX = IR_DATASETS_PREFIX
SPLIT_IDS = {"train": ("train",), "dev": ("dev/small", "dev"), "test": ("test",)}


def is_ir_datasets(source: str) -> bool:
    return source.startswith(PREFIX)


def split_ids(dataset_id: str, registry) -> dict[str, str]:
    """{split: ir_datasets id of its queries and judgements}."""
    subs = {split: next((f"{dataset_id}/{s}" for s in suffixes if f"{dataset_id}/{s}" in registry), None)
            for split, suffixes in SPLIT_IDS.items()}
    subs = {split: sub for split, sub in subs.items() if sub is not None}
    if subs:
        return subs
    last = dataset_id.rsplit("/", 1)[-1]
    return {last if last in SPLIT_IDS else "test": dataset_id}


def _home() -> str:
    return os.environ.get("IR_DATASETS_HOME", os.path.expanduser("~/.ir_datasets"))


def _read(what: str, dataset_id: str, rows):
    """Materialise an ir_datasets iterator, its download failures as one-line DownloadErrors."""
    try:
        return list(rows())
    except DownloadError:
        raise
    except Exception as err:  # ir_datasets raises what its downloader and formats raise
        detail = " ".join(str(err).split())[:300] or type(err).__name__
        raise DownloadError(
            f"ir_datasets:{dataset_id}: cannot read its {what} ({type(err).__name__}: {detail}); without a network "
            f"the files must already be in {_home()} (set IR_DATASETS_HOME to another cache), or see "
            f"https://ir-datasets.com/{dataset_id.split('/')[0]}.html for files to place by hand"
        ) from None


def load_ir_datasets(source: str, name: str | None = None) -> Dataset:
    """The collection ``source`` (``ir_datasets:<id>``) names, read through ir_datasets."""
    import ir_datasets

    dataset_id = source[len(PREFIX):].strip("/")
    if dataset_id not in ir_datasets.registry:
        raise DownloadError(f"dataset.source {source!r}: ir_datasets knows no id {dataset_id!r} "
                            f"(ir_datasets {ir_datasets.__version__}; ids: https://ir-datasets.com)")
    root = ir_datasets.load(dataset_id)
    if not root.has_docs():
        raise DownloadError(f"dataset.source {source!r}: {dataset_id} has no documents; name the collection "
                            f"(e.g. {dataset_id.rsplit('/', 1)[0]})")
    docs = _read("documents", dataset_id, root.docs_iter)
    corpus = pd.DataFrame({"doc_id": [d.doc_id for d in docs],
                           "title": [str(getattr(d, "title", "") or "") for d in docs],
                           "text": [str(getattr(d, "text", None) or d.default_text()) for d in docs]})
    queries, qrels, where = [], {}, {"corpus": f"{source} documents", "queries": f"{source} queries"}
    for split, sub in split_ids(dataset_id, ir_datasets.registry).items():
        ds = ir_datasets.load(sub)
        queries += [(q.query_id, q.default_text()) for q in _read("queries", sub, ds.queries_iter)]
        judged = _read("judgements", sub, ds.qrels_iter)
        qrels[split] = pd.DataFrame([(j.query_id, j.doc_id, int(j.relevance)) for j in judged],
                                    columns=["query_id", "doc_id", "relevance"])
        where[split] = f"ir_datasets:{sub} qrels"
        log.info("ir_datasets:%s: %d judgements as the %s split", sub, len(judged), split)
    # the same query may be listed by several split ids (BEIR's shared queries file): keep it once
    queries_df = pd.DataFrame(queries, columns=["query_id", "text"]).drop_duplicates()
    return assemble(name or dataset_id.replace("/", "-"), corpus, queries_df, qrels, where)
