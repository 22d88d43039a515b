"""benchmarks/kernel_divergence.py names the first operation two kernel modes disagree on.

Fed two recordings as its child processes write them (each operation's name and output), the
second a last bit off from one operation on, as another GEMM or attention kernel leaves it.
"""

import numpy as np

from benchmarks.kernel_divergence import first_divergence

OPS = ["embedding in embeddings.word_embeddings", "native_layer_norm in embeddings.LayerNorm",
       "addmm in encoder.layer.0.attention.self.query", "gelu in encoder.layer.0.intermediate.intermediate_act_fn"]


def recording(path, outputs, embeddings, grad):
    np.savez(path, names=np.array(OPS), embeddings=embeddings, **{f"op{i}": o for i, o in enumerate(outputs)},
             **{"grad:w": grad})
    return np.load(path)


def test_the_first_operation_off_by_a_last_bit_is_named_with_its_gap(tmp_path):
    rng = np.random.default_rng(0)
    outputs = [rng.standard_normal((4, 3)).astype(np.float32) for _ in OPS]
    moved = [o.copy() for o in outputs]
    moved[2][1, 1] = np.nextafter(moved[2][1, 1], np.float32(np.inf))
    moved[3] = moved[3] * np.float32(1 + 2e-7)
    emb, grad = outputs[-1], outputs[0]
    a = recording(tmp_path / "a.npz", outputs, emb, grad)
    b = recording(tmp_path / "b.npz", moved, emb + np.float32(1e-7), grad)
    found = first_divergence(a, b)
    assert found["first"]["op"] == OPS[2] and found["first"]["elements_differing"] == 1
    assert found["first"]["max_abs"] == abs(float(moved[2][1, 1]) - float(outputs[2][1, 1])) > 0
    assert found["operations_differing"] == 2 and found["grad_max_abs"] == 0.0
    assert found["embeddings_max_abs"] > 0
    assert first_divergence(a, a)["first"] is None
