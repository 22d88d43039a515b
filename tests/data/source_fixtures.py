"""Tiny archives in each downloadable source's exact published format, generated in code and seeded:
the BEIR zip (one ``<name>/`` folder), MS MARCO passage's tar.gz and tsv files with the TREC DL
2019 queries and qrels, NQ320K's NCI-style JSON lines and LF-AmazonTitles-131K's raw zip of the
Extreme Classification Repository. Each builder returns ``{served path: bytes}``; the published
file names are the paths."""

from __future__ import annotations

import gzip
import io
import json
import random
import tarfile
import zipfile

WORDS = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma "
         "tau upsilon phi chi psi omega").split()


def sentence(rng: random.Random, n: int = 8) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def jsonl(rows) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def tsv(rows) -> bytes:
    return "".join("\t".join(str(c) for c in r) + "\n" for r in rows).encode()


def zipped(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def tarred(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), 0
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def beir_zip(name: str, n_docs: int = 40, splits=(("train", 20), ("test", 8)), seed: int = 0) -> dict[str, bytes]:
    """``<name>.zip`` as BEIR publishes it: ``<name>/corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``."""
    rng = random.Random(seed)
    docs = [{"_id": f"d{i}", "title": f"title {i}", "text": sentence(rng)} for i in range(n_docs)]
    n_queries = sum(n for _, n in splits)
    queries = [{"_id": f"q{i}", "text": sentence(rng, 5)} for i in range(n_queries)]
    members = {f"{name}/corpus.jsonl": jsonl(docs), f"{name}/queries.jsonl": jsonl(queries)}
    first = 0
    for split, n in splits:
        rows = [("query-id", "corpus-id", "score")] + [(f"q{q}", f"d{q % n_docs}", 1) for q in range(first, first + n)]
        members[f"{name}/qrels/{split}.tsv"] = tsv(rows)
        first += n
    return {f"{name}.zip": zipped(members)}


def msmarco(n_docs: int = 60, n_train: int = 30, n_dev: int = 10, n_test: int = 5, seed: int = 0) -> dict[str, bytes]:
    """MS MARCO passage's published files: collection and queries in two tar.gz archives (members at
    the archive root), the train qrels, and TREC DL 2019's gzipped queries and graded qrels."""
    rng = random.Random(seed)
    collection = tsv((i, sentence(rng, 12)) for i in range(n_docs))
    train = [(1000 + i, sentence(rng, 5)) for i in range(n_train)]
    dev = [(2000 + i, sentence(rng, 5)) for i in range(n_dev)]
    test = [(3000 + i, sentence(rng, 5)) for i in range(n_test)]
    qrels_train = tsv((q, 0, i % n_docs, 1) for i, (q, _) in enumerate(train))
    qrels_dev = tsv((q, 0, (7 * i) % n_docs, 1) for i, (q, _) in enumerate(dev))
    queries = {"queries.train.tsv": tsv(train), "queries.dev.tsv": tsv(dev), "queries.eval.tsv": tsv(test)}
    dl_qrels = "".join(f"{q} Q0 {(3 * i + g) % n_docs} {g}\n" for i, (q, _) in enumerate(test) for g in (3, 1, 0))
    return {
        "collectionandqueries.tar.gz": tarred({"collection.tsv": collection, "queries.dev.small.tsv": tsv(dev),
                                               "qrels.dev.small.tsv": qrels_dev, "qrels.train.tsv": qrels_train,
                                               **queries}),
        "queries.tar.gz": tarred(queries),
        "qrels.train.tsv": qrels_train,
        "msmarco-test2019-queries.tsv.gz": gz(tsv(test)),
        "2019qrels-pass.txt": dl_qrels.encode(),
    }


def nq320k(n_docs: int = 30, n_train: int = 20, n_valid: int = 6, seed: int = 0) -> dict[str, bytes]:
    """The three JSON-lines files of dqmis/NQ320K-NCI: corpus, train and valid (query, docid) pairs."""
    rng = random.Random(seed)
    corpus = [{"docid": i, "title": f"Title {i}", "document": sentence(rng, 12)} for i in range(n_docs)]
    train = [{"query": sentence(rng, 5), "docid": i % n_docs, "nq_id": str(-i - 1)} for i in range(n_train)]
    valid = [{"query": sentence(rng, 5), "docid": (5 * i) % n_docs, "nq_id": str(100 + i)} for i in range(n_valid)]
    return {"corpus.jsonl": jsonl(corpus), "train.jsonl": jsonl(train), "valid.jsonl": jsonl(valid)}


def lf_amazontitles(n_labels: int = 25, n_train: int = 20, n_test: int = 6, seed: int = 0) -> dict[str, bytes]:
    """``LF-Amazon-131K.raw.zip``: ``LF-Amazon-131K/{lbl,trn,tst}.json.gz``, points with label indices."""
    rng = random.Random(seed)
    labels = [{"uid": f"L{i}", "title": sentence(rng, 4)} for i in range(n_labels)]

    def points(prefix, n):
        return [{"uid": f"{prefix}{i}", "title": sentence(rng, 4), "content": sentence(rng, 10),
                 "target_ind": sorted({i % n_labels, (3 * i + 1) % n_labels}), "target_rel": [1.0, 1.0]}
                for i in range(n)]

    members = {f"LF-Amazon-131K/{name}": gz(jsonl(rows)) for name, rows in
               (("lbl.json.gz", labels), ("trn.json.gz", points("P", n_train)), ("tst.json.gz", points("T", n_test)))}
    return {"LF-Amazon-131K.raw.zip": zipped(members)}
