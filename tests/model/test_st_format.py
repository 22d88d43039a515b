"""A saved encoder loads in sentence-transformers and gives the pipeline's embeddings."""

import numpy as np
import pytest
from sentence_transformers import SentenceTransformer

from ehi.model.encoder import load_encoder

TEXTS = ["what causes fever", "a much longer document about rivers and castles " * 12, "x", "Ünïcode tëxt, too"]


@pytest.mark.parametrize("name, max_length", [("tiny-random", 16), ("all-MiniLM-L6-v2", 24)])
def test_sentence_transformers_reproduces_the_pipeline_embeddings(tmp_path, name, max_length):
    encoder = load_encoder(name, max_length=max_length, device="cpu")
    encoder.save(tmp_path / "encoder")
    model = SentenceTransformer(str(tmp_path / "encoder"), device="cpu")
    assert model.max_seq_length == max_length  # the training cut, not the tokenizer's 512
    theirs = model.encode(TEXTS, batch_size=2, convert_to_numpy=True)
    np.testing.assert_allclose(theirs, encoder.encode(TEXTS, batch_size=3), atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(theirs, axis=1), 1.0, atol=1e-5)
    # the folder still loads as the pipeline's own encoder
    again = load_encoder(str(tmp_path / "encoder"), max_length=max_length, device="cpu")
    np.testing.assert_allclose(again.encode(TEXTS), encoder.encode(TEXTS), atol=1e-6)
