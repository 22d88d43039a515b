"""What each kernel mode costs a training step, and whether it changes the numbers.

Each mode of :mod:`ehi.core.kernels` (``native``: the machine's own paths; ``avx2``: the default;
``compatible``: MKL's cross-vendor branch) runs in a process of its own, since the variables must
be set before torch runs its first kernel. Each process times EHI training steps of the MiniLM
encoder (hard negatives from the positive's leaf, one thread, ``benchmarks.training``'s step
runner) in CPU seconds, which a machine shared with other jobs leaves comparable where wall time is
not, and hashes the weights after its steps, so two modes are bit-identical or not on this
machine. Modes run interleaved over rounds so that load changes hit them alike.

    python -m benchmarks.kernel_modes results/benchmarks/kernel_modes --steps 6 --rounds 2
    python -m benchmarks.kernel_modes results/benchmarks/kernel_modes --golden

``--golden`` runs the golden's command (the test config's ``main`` at 2 cores) once per mode in a
temporary directory and writes, per mode and artefact, whether its digest equals the golden's bit
for bit and whether it holds at the golden's cross-kernel tolerances (tests/workflow/digests.py).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

from ehi.core.kernels import KERNEL_VARIABLES, MODE_SWITCH, MODES

REPO = Path(__file__).resolve().parents[1]


def _mode_environment(mode: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {*KERNEL_VARIABLES, MODE_SWITCH}}
    env.update(MODES[mode], **{MODE_SWITCH: mode})
    env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")
    return env


def run_steps(steps: int, n_docs: int, max_length: int, batch_size: int) -> dict:
    """In this process: ``steps`` timed training steps after one warm-up; CPU seconds each and a
    sha256 of the encoder's and indexer's weights afterwards."""
    import torch

    from benchmarks.training import _setup, _step_runner

    torch.set_num_threads(1)
    torch.manual_seed(0)
    data, encoder = _setup(n_docs, n_docs // 3, max_length, batch_size, "all-MiniLM-L6-v2")
    step, enc, indexer, _ = _step_runner(data, encoder, True, True, batch_size, max_length)
    step(0)
    cpu = []
    for b in range(1, steps + 1):
        start = time.process_time()
        step(b)
        cpu.append(time.process_time() - start)
    digest = hashlib.sha256()
    for module in (enc.model, indexer):
        for name, tensor in sorted(module.state_dict().items()):
            digest.update(name.encode() + tensor.detach().contiguous().numpy().tobytes())
    return {"cpu_seconds": cpu, "weights_sha256": digest.hexdigest(),
            "cpu_capability": torch.backends.cpu.get_cpu_capability()}


def compare_modes(out_dir: Path, modes: list[str], steps: int, rounds: int, n_docs: int,
                  max_length: int, batch_size: int) -> pd.DataFrame:
    rows = []
    for round_ in range(rounds):
        for mode in modes:
            cmd = [sys.executable, "-m", "benchmarks.kernel_modes", "--child", str(steps), str(n_docs),
                   str(max_length), str(batch_size)]
            done = subprocess.run(cmd, env=_mode_environment(mode), capture_output=True, text=True, check=True)
            result = json.loads(done.stdout.strip().splitlines()[-1])
            for i, seconds in enumerate(result["cpu_seconds"]):
                rows.append({"mode": mode, "round": round_, "step": i, "cpu_seconds": seconds,
                             "weights_sha256": result["weights_sha256"],
                             "cpu_capability": result["cpu_capability"]})
    steps_table = pd.DataFrame(rows)
    summary = steps_table.groupby("mode", sort=False).agg(
        median_cpu_seconds=("cpu_seconds", "median"), steps=("cpu_seconds", "size"),
        weights_sha256=("weights_sha256", "first"), digests=("weights_sha256", "nunique"),
        cpu_capability=("cpu_capability", "first")).reset_index()
    native = summary.set_index("mode").median_cpu_seconds.get("native")
    summary["over_native"] = summary.median_cpu_seconds / native if native else float("nan")
    reference = summary.weights_sha256.iloc[0]
    summary["bit_identical_to_first"] = summary.weights_sha256 == reference
    out_dir.mkdir(parents=True, exist_ok=True)
    steps_table.to_csv(out_dir / "steps.csv", index=False)
    summary.to_csv(out_dir / "summary.csv", index=False)
    (out_dir / "summary.md").write_text(summary.to_markdown(index=False, floatfmt=".3f") + "\n")
    return summary


def golden_by_mode(out_dir: Path, modes: list[str]) -> pd.DataFrame:
    import tempfile

    sys.path.insert(0, str(REPO / "tests" / "workflow"))
    from digests import COMMAND, load_golden, mismatches, run_digests, run_tables

    golden = load_golden()
    rows = []
    for mode in modes:
        with tempfile.TemporaryDirectory(prefix=f"ehi-golden-{mode}-") as work:
            snakemake = Path(sys.executable).with_name("snakemake")
            env = {**_mode_environment(mode), "HF_HUB_OFFLINE": "1"}
            env.pop("OMP_NUM_THREADS"), env.pop("MKL_NUM_THREADS")  # the golden's 2 cores, as recorded
            subprocess.run([str(snakemake), "--snakefile", str(REPO / "Snakefile"), "--directory", work, *COMMAND],
                           env=env, check=True, capture_output=True)
            digests = run_digests(Path(work))
            failing = mismatches(golden, digests, run_tables(Path(work)))
            for name, digest in sorted(digests.items()):
                rows.append({"mode": mode, "artefact": name,
                             "bit_identical_to_golden": digest["sha256"] == golden["digests"].get(name, {}).get("sha256"),
                             "within_tolerance": not any(name in problem for problem in failing)})
    table = pd.DataFrame(rows)
    out_dir.mkdir(parents=True, exist_ok=True)
    table.to_csv(out_dir / "golden_by_mode.csv", index=False)
    counts = table.groupby("mode", sort=False).agg(
        artefacts=("artefact", "size"), bit_identical=("bit_identical_to_golden", "sum"),
        within_tolerance=("within_tolerance", "sum")).reset_index()
    (out_dir / "golden_by_mode.md").write_text(counts.to_markdown(index=False) + "\n")
    return counts


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child":
        steps, n_docs, max_length, batch_size = map(int, argv[1:5])
        print(json.dumps(run_steps(steps, n_docs, max_length, batch_size)))
        return
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out_dir", type=Path)
    p.add_argument("--modes", nargs="+", default=["native", "avx2", "compatible"], choices=list(MODES))
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--n-docs", type=int, default=600)
    p.add_argument("--max-length", type=int, default=48)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--golden", action="store_true", help="compare each mode's test-config run with the golden")
    a = p.parse_args(argv)
    if a.golden:
        print(golden_by_mode(a.out_dir, a.modes).to_string(index=False))
        return
    summary = compare_modes(a.out_dir, a.modes, a.steps, a.rounds, a.n_docs, a.max_length, a.batch_size)
    print(summary.to_string(index=False))


if __name__ == "__main__":
    main()
