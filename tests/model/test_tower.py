"""ehi.model.tower: the encoder of an embeddings folder, checked against the arrays it reads."""

import numpy as np
import pytest
import torch

from ehi.core.config_values import encoder_dim
from ehi.data.embeddings import write_ids
from ehi.model.encoder import load_encoder
from ehi.model.tower import VectorTower, load_tower, write_tower_spec


@pytest.fixture()
def folder(tmp_path):
    rng = np.random.default_rng(0)
    root = tmp_path / "vectors"
    root.mkdir()
    np.save(root / "docs.npy", rng.standard_normal((12, 8)).astype(np.float32))
    np.save(root / "queries.npy", rng.standard_normal((5, 8)).astype(np.float32))
    write_ids(root / "doc_ids.txt", [f"d{i}" for i in range(12)])
    write_ids(root / "query_ids.txt", [f"q{i}" for i in range(5)])
    return root


def _unit(x):
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_an_embeddings_folder_is_its_identity_tower(folder):
    tower = load_encoder(str(folder))
    assert isinstance(tower, VectorTower) and tower.dim == 8 and tower.precomputed
    got = tower.encode(["d:3", "q:1", "d:0"])
    want = _unit(np.stack([np.load(folder / "docs.npy")[3], np.load(folder / "queries.npy")[1],
                           np.load(folder / "docs.npy")[0]]))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    assert encoder_dim(str(folder)) is None  # the config check leaves a tower's width to its vectors


@pytest.mark.parametrize("kind", ["linear", "mlp"])
def test_trainable_towers_start_at_the_identity_and_save_their_weights(folder, tmp_path, kind):
    start = load_tower(write_tower_spec(tmp_path / kind, folder, kind=kind, shared=False, hidden=16))
    keys = [f"d:{i}" for i in range(12)] + [f"q:{i}" for i in range(5)]
    np.testing.assert_allclose(start.encode(keys), load_encoder(str(folder)).encode(keys), atol=1e-6)
    assert set(start.model) == {"docs", "queries"}  # one tower a side
    with torch.no_grad():
        for p in start.model.parameters():
            p.add_(0.1 * torch.randn_like(p))
    start.save(tmp_path / "trained")
    again = load_tower(tmp_path / "trained")
    np.testing.assert_array_equal(again.encode(keys), start.encode(keys))


def test_a_text_that_is_no_row_key_is_refused_in_one_line(folder):
    with pytest.raises(ValueError, match=r"is not a row key \(d:<row> or q:<row>\)") as err:
        load_encoder(str(folder)).encode(["a sentence"])
    assert "\n" not in str(err.value)
