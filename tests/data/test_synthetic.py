import numpy as np

from ehi.data.synthetic import SyntheticConfig, generate, vocabulary_words


def test_deterministic_in_seed():
    cfg = SyntheticConfig(n_docs=120, n_queries=30, n_topics=2, n_subtopics=2)
    a, b = generate(cfg), generate(cfg)
    for kind in ("corpus", "queries", "qrels"):
        assert getattr(a, kind).equals(getattr(b, kind))
    c = generate(SyntheticConfig(n_docs=120, n_queries=30, n_topics=2, n_subtopics=2, seed=99))
    assert not a.corpus.text.equals(c.corpus.text)


def test_shape_splits_and_judgements(tiny_dataset):
    ds = tiny_dataset
    assert len(ds.corpus) == 200 and ds.corpus.doc_id.is_unique
    assert set(ds.queries.split) == {"train", "dev", "test"}
    assert set(ds.qrels.query_id) == set(ds.queries.query_id)  # every query is judged
    assert set(ds.qrels.doc_id) <= set(ds.corpus.doc_id)
    per_query = ds.qrels.groupby("query_id").size()
    assert per_query.max() > 1, "some queries must have several relevant documents"


def test_texts_are_real_vocabulary_words(tiny_dataset):
    vocab = set(vocabulary_words())
    words = " ".join(tiny_dataset.corpus.text.head(20)).split()
    assert words and all(w in vocab for w in words)


def test_relevant_documents_share_the_query_words(tiny_dataset):
    ds = tiny_dataset
    texts = dict(zip(ds.corpus.doc_id, ds.corpus.title + " " + ds.corpus.text))
    queries = dict(zip(ds.queries.query_id, ds.queries.text))
    overlaps = [
        len(set(queries[q].split()) & set(texts[d].split())) for q, d in zip(ds.qrels.query_id, ds.qrels.doc_id)
    ]
    assert np.min(overlaps) >= SyntheticConfig().query_keys


def test_unknown_key_is_named():
    import pytest

    with pytest.raises(ValueError, match="n_dcos"):
        SyntheticConfig.from_dict({"n_dcos": 5})
