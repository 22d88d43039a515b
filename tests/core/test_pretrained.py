"""The default encoder's weights are the published all-MiniLM-L6-v2 ones, checked by their sha256."""

import hashlib

import pytest

from ehi.core.errors import WeightsError
from ehi.core.pretrained import (MINILM_WEIGHTS_SHA256, check_weights_sha256, file_sha256, minilm_path,
                                 verified_minilm_path)


def test_the_shipped_weights_are_the_published_ones():
    assert verified_minilm_path() == minilm_path()
    assert file_sha256(minilm_path() / "model.safetensors") == MINILM_WEIGHTS_SHA256


def test_file_sha256_equals_hashlib_over_several_blocks(tmp_path):
    data = bytes(range(256)) * 9000  # > 1 MiB: more than one read block
    (tmp_path / "w.bin").write_bytes(data)
    assert file_sha256(tmp_path / "w.bin") == hashlib.sha256(data).hexdigest()


def test_other_weights_are_refused_naming_the_file(tmp_path):
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"not the published weights")
    with pytest.raises(WeightsError, match="model.safetensors: sha256 .* is not that of the model"):
        check_weights_sha256(weights, MINILM_WEIGHTS_SHA256, "the model")
