import numpy as np
import pytest

from ehi.data.embeddings import load_arrays, load_embeddings
from ehi.data.vector_world import WorldConfig, generate_world

SMALL = dict(n_docs=600, dim=16, n_topics=4, subtopics_per_topic=3, n_train=50, n_dev=10, n_test=40)


def _world(tmp_path, name="w", **knobs):
    generate_world(tmp_path / name, WorldConfig(**{**SMALL, **knobs}))
    return tmp_path / name


def test_same_seed_same_bytes_other_seed_other_world(tmp_path):
    a, b, c = _world(tmp_path, "a"), _world(tmp_path, "b"), _world(tmp_path, "c", seed=1)
    for name in ("docs.npy", "queries.npy", "qrels/test.tsv"):
        assert (a / name).read_bytes() == (b / name).read_bytes()
    assert (a / "docs.npy").read_bytes() != (c / "docs.npy").read_bytes()


def test_the_corpus_does_not_depend_on_the_queries_asked(tmp_path):
    a, b = _world(tmp_path, "a"), _world(tmp_path, "b", n_train=500, asymmetry=2.0)
    assert (a / "docs.npy").read_bytes() == (b / "docs.npy").read_bytes()
    assert (a / "queries.npy").read_bytes() != (b / "queries.npy").read_bytes()


def test_a_valid_layout_with_several_relevant_documents_a_query(tmp_path):
    ds = load_embeddings(_world(tmp_path, mean_relevant=4.0))
    docs, queries = load_arrays(tmp_path / "w")
    assert docs.shape == (600, 16) and queries.shape == (100, 16)
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1, atol=1e-5)
    assert ds.queries.split.value_counts().to_dict() == {"train": 50, "test": 40, "dev": 10}
    assert ds.qrels.groupby("query_id").size().mean() > 2


def test_a_query_is_nearer_its_relevant_documents_than_the_rest(tmp_path):
    # exact search from the query ranks its facet's documents above a random document's rank
    ds = load_embeddings(_world(tmp_path))
    docs, queries = load_arrays(tmp_path / "w")
    row = {d: i for i, d in enumerate(ds.corpus.doc_id)}
    qrow = {q: i for i, q in enumerate(ds.queries.query_id)}
    ranks = []
    for q, d in zip(ds.qrels.query_id, ds.qrels.doc_id):
        scores = docs @ queries[int(ds.queries.text[qrow[q]][2:])]
        ranks.append(int((scores > scores[row[d]]).sum()))
    assert np.median(ranks) < len(docs) / 20


def test_asymmetry_moves_queries_off_their_documents(tmp_path):
    def mean_relevant_cosine(path):
        ds = load_embeddings(path)
        docs, queries = load_arrays(path)
        row = dict(zip(ds.corpus.doc_id, range(len(docs))))
        qrow = dict(zip(ds.queries.query_id, ds.queries.text.str[2:].astype(int)))
        return float(np.mean([queries[qrow[q]] @ docs[row[d]] for q, d in zip(ds.qrels.query_id, ds.qrels.doc_id)]))

    assert mean_relevant_cosine(_world(tmp_path, "on", asymmetry=2.0)) < mean_relevant_cosine(_world(tmp_path, "off"))


def test_unknown_knob_is_one_line():
    with pytest.raises(Exception, match="unknown vector world key"):
        WorldConfig.from_dict({"n_doc": 5})
