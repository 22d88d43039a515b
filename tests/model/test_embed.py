"""ehi.model.embed: the cached embeddings every index reads, rows in corpus/queries order."""

import numpy as np
import pytest

from ehi.data.dataset import doc_texts
from ehi.model.embed import embed_dataset, load_array, save_array, timing_frame
from ehi.model.encoder import load_encoder


@pytest.fixture(scope="module")
def encoder_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("enc") / "encoder"
    load_encoder("tiny-random", max_length=16, device="cpu").save(path)
    return path


def test_arrays_round_trip_and_object_arrays_are_refused(tmp_path):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    save_array(x, tmp_path / "x.npy")
    np.testing.assert_array_equal(load_array(tmp_path / "x.npy"), x)
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match="allow_pickle"):
        load_array(tmp_path / "obj.npy")  # a cached file is never unpickled


def test_embed_dataset_rows_follow_the_tables(tiny_dataset, encoder_dir):
    small = type(tiny_dataset)(tiny_dataset.name, tiny_dataset.corpus.head(12), tiny_dataset.queries.head(5),
                               tiny_dataset.qrels)
    docs, queries, facts = embed_dataset(encoder_dir, small, max_length=16, batch_size=4, device="cpu")
    assert docs.shape[0] == 12 and queries.shape == (5, docs.shape[1])
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1.0, rtol=1e-5)
    encoder = load_encoder(str(encoder_dir), max_length=16, device="cpu")
    np.testing.assert_allclose(docs[7], encoder.encode([doc_texts(small.corpus)[7]])[0], atol=1e-5)
    np.testing.assert_allclose(queries[2], encoder.encode([small.queries.text.iloc[2]])[0], atol=1e-5)
    assert facts["device"] == "cpu" and facts["doc_seconds"] >= 0
    frame = timing_frame("tiny", "de", facts, 12, 5, threads=1)
    assert frame.stage.tolist() == ["embed_corpus", "embed_queries"] and frame["items"].tolist() == [12, 5]
