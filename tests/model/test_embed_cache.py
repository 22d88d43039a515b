"""ehi.model.embed_cache: embeddings keyed by weights, tokenizer, length and texts, so encoders with
the same weights (a frozen encoder's saved copy) embed once, and any change embeds anew."""

import numpy as np
import torch

from ehi.model.embed import embed_dataset
from ehi.model.embed_cache import encoder_digest
from ehi.model.encoder import load_encoder


def small(dataset):
    return type(dataset)(dataset.name, dataset.corpus.head(10), dataset.queries.head(4), dataset.qrels)


def test_a_saved_copy_of_the_weights_is_a_hit_with_the_same_arrays(tiny_dataset, tmp_path):
    first, copy = tmp_path / "first", tmp_path / "copy"
    encoder = load_encoder("tiny-random", max_length=16, device="cpu")
    encoder.save(first)
    encoder.encode(["a text sets the tokenizer's truncation"])  # a call's state must not change the key
    encoder.save(copy)
    data, cache = small(tiny_dataset), tmp_path / "cache"
    docs, queries, facts = embed_dataset(first, data, 16, 4, device="cpu", cache_dir=cache, version=1)
    assert "cached" not in facts and len(list(cache.iterdir())) == 1
    docs2, queries2, facts2 = embed_dataset(copy, data, 16, 4, device="cpu", cache_dir=cache, version=1)
    assert facts2["cached"] and facts2["doc_seconds"] == facts["doc_seconds"]  # the computing run's timing
    np.testing.assert_array_equal(docs2, docs)
    np.testing.assert_array_equal(queries2, queries)


def test_other_weights_length_texts_or_version_embed_anew(tiny_dataset, tmp_path):
    path, other = tmp_path / "enc", tmp_path / "other"
    encoder = load_encoder("tiny-random", max_length=16, device="cpu")
    encoder.save(path)
    before = encoder_digest(encoder)
    with torch.no_grad():
        next(encoder.model.parameters()).view(-1)[0] += 1e-3
    assert encoder_digest(encoder) != before
    encoder.save(other)
    data, cache = small(tiny_dataset), tmp_path / "cache"
    embed_dataset(path, data, 16, 4, device="cpu", cache_dir=cache, version=1)
    embed_dataset(other, data, 16, 4, device="cpu", cache_dir=cache, version=1)
    embed_dataset(path, data, 12, 4, device="cpu", cache_dir=cache, version=1)
    embed_dataset(path, data, 16, 4, device="cpu", cache_dir=cache, version=2)
    fewer = type(data)(data.name, data.corpus.head(9), data.queries, data.qrels)
    embed_dataset(path, fewer, 16, 4, device="cpu", cache_dir=cache, version=1)
    assert len(list(cache.iterdir())) == 5  # each change its own entry, none served another's arrays
    _, _, facts = embed_dataset(path, data, 16, 4, device="cpu", cache_dir=cache, version=1)
    assert facts["cached"]
