import numpy as np
import pytest
import torch

from ehi.core.errors import ConfigError
from ehi.model.encoder import load_encoder


def test_tiny_random_is_normalised_batched_and_deterministic():
    enc = load_encoder("tiny-random", max_length=16, device="cpu")
    texts = ["alpha beta", "gamma delta epsilon " * 10, "zeta"]
    a = enc.encode(texts, batch_size=2)
    assert a.shape == (3, enc.dim) and a.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, rtol=1e-5)
    # batching and length-sorting do not change an embedding
    b = np.stack([enc.encode([t])[0] for t in texts])
    np.testing.assert_allclose(a, b, atol=1e-5)
    c = load_encoder("tiny-random", max_length=16, device="cpu").encode(texts)
    np.testing.assert_allclose(a, c, atol=1e-6)


def test_forward_keeps_gradients():
    enc = load_encoder("tiny-random", max_length=16, device="cpu")
    out = enc(["one two", "three"])
    out.sum().backward()
    assert any(p.grad is not None for p in enc.parameters())


def test_save_and_reload_as_local_folder(tmp_path):
    enc = load_encoder("tiny-random", max_length=16, device="cpu")
    enc.save(tmp_path / "enc")
    assert (tmp_path / "enc" / "model.safetensors").exists()
    again = load_encoder(str(tmp_path / "enc"), max_length=16, device="cpu")
    torch.testing.assert_close(enc(["a b c"]), again(["a b c"]))


def test_offline_unknown_model_fails_fast():
    with pytest.raises(ConfigError, match="encoder.name: 'someone/no-such-model' is not in the Hugging Face cache"):
        load_encoder("someone/no-such-model", device="cpu")


@pytest.mark.slow
def test_minilm_loads_offline_from_its_package():
    enc = load_encoder("all-MiniLM-L6-v2", max_length=32, device="cpu")
    emb = enc.encode(["a cat sits on the mat", "a kitten rests on a rug", "stock markets fell today"])
    assert emb.shape == (3, 384)
    assert emb[0] @ emb[1] > emb[0] @ emb[2]
