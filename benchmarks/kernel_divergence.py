"""The first torch operation whose result differs between two kernel modes on this machine.

Each mode of :mod:`ehi.core.kernels` runs in a process of its own (the variables must be set before
torch runs its first kernel), one thread. The process runs the embedded default's encoder
(all-MiniLM-L6-v2, 48 tokens) forward and backward over a batch of the embedded default's documents
under a ``TorchDispatchMode`` that keeps the output of every ATen operation in the order they ran.
The parent then walks the modes' operations side by side and names, per pair of modes, the first
whose output is not bit-identical, by how much it differs, and how far the difference has grown by
the pooled embeddings and the gradients.

    python -m benchmarks.kernel_divergence results/benchmarks/kernel_divergence --texts 8
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from itertools import combinations
from pathlib import Path

import numpy as np

from benchmarks.kernel_modes import REPO, _mode_environment
from ehi.core.kernels import cpu_model


def record_operations(out: Path, n_texts: int) -> None:
    """In this process: every ATen operation's name and output through one forward and backward."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    from ehi.data.synthetic import SyntheticConfig, generate
    from ehi.model.encoder import load_encoder

    torch.set_num_threads(1)
    names, outputs, modules = [], [], ["forward"]

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            result = func(*args, **(kwargs or {}))
            first = result[0] if isinstance(result, (tuple, list)) and result else result
            if isinstance(first, torch.Tensor) and first.is_floating_point():
                names.append(f"{func.overloadpacket.__name__} in {modules[-1]}")
                outputs.append(first.detach().float().numpy().copy())
            return result

    corpus = generate(SyntheticConfig(n_docs=1000, n_queries=400)).corpus
    texts = corpus.text.tolist()[:n_texts]
    encoder = load_encoder("all-MiniLM-L6-v2", max_length=48, device="cpu")
    for name, module in encoder.model.named_modules():  # each operation named by the module that ran it
        module.register_forward_pre_hook(lambda _m, _i, name=name: modules.append(name or "model"))
        module.register_forward_hook(lambda _m, _i, _o: modules.pop() and None)  # None: the output unchanged
    batch = encoder.tokenize(texts)
    with Record():
        emb = encoder.forward(texts)
        modules.append("backward")
        (emb @ emb.T).square().sum().backward()  # a loss over every pair, so every weight gets a gradient
    grads = {n: p.grad.numpy() for n, p in encoder.model.named_parameters() if p.grad is not None}
    np.savez(out, names=np.array(names), tokens=batch["input_ids"].numpy(), embeddings=emb.detach().numpy(),
             **{f"op{i}": o for i, o in enumerate(outputs)}, **{f"grad:{n}": g for n, g in grads.items()})
    out.with_suffix(".json").write_text(json.dumps({"cpu": cpu_model(), "cpu_capability": torch.backends.cpu.get_cpu_capability()}))


def first_divergence(a: np.lib.npyio.NpzFile, b: np.lib.npyio.NpzFile) -> dict:
    """Where two recordings part: the first operation whose output differs, and the final gaps."""
    names_a, names_b = list(a["names"]), list(b["names"])
    first, differing = None, 0
    for i, (name_a, name_b) in enumerate(zip(names_a, names_b)):
        x, y = a[f"op{i}"], b[f"op{i}"]
        if name_a != name_b or x.shape != y.shape:
            first = first or {"index": i, "op": f"{name_a} vs {name_b}", "max_abs": None}
            break
        if not np.array_equal(x, y, equal_nan=True):
            differing += 1
            if first is None:
                gap = np.abs(x.astype(np.float64) - y)
                first = {"index": i, "op": name_a, "shape": list(x.shape), "elements_differing": int((x != y).sum()),
                         "max_abs": float(gap.max()), "max_rel": float((gap / np.maximum(np.abs(x), 1e-30)).max())}
    grads = [k for k in a.files if k.startswith("grad:")]
    return {"operations": len(names_a), "operations_differing": differing, "first": first,
            "embeddings_max_abs": float(np.abs(a["embeddings"].astype(np.float64) - b["embeddings"]).max()),
            "grad_max_abs": max(float(np.abs(a[k].astype(np.float64) - b[k]).max()) for k in grads)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--modes", nargs="+", default=["native", "avx2", "compatible"])
    parser.add_argument("--texts", type=int, default=8)
    parser.add_argument("--record", help=argparse.SUPPRESS)  # the child process's own mode
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.record:
        record_operations(args.out / f"{args.record}.npz", args.texts)
        return
    for mode in args.modes:
        subprocess.run([sys.executable, "-m", "benchmarks.kernel_divergence", str(args.out), "--record", mode,
                        "--texts", str(args.texts)], env=_mode_environment(mode), cwd=REPO, check=True)
    recordings = {m: np.load(args.out / f"{m}.npz") for m in args.modes}
    result = {f"{a} vs {b}": first_divergence(recordings[a], recordings[b]) for a, b in combinations(args.modes, 2)}
    result["machine"] = {m: json.loads((args.out / f"{m}.json").read_text()) for m in args.modes}
    (args.out / "divergence.json").write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))
    for m in args.modes:
        for suffix in (".npz", ".json"):  # tens of MB of activations: the summary is what is kept
            os.remove(args.out / f"{m}{suffix}")


if __name__ == "__main__":
    main()
