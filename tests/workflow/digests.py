"""The test config's results and trained weights, and the golden copy they are held to.

The golden is one run of ``snakemake --cores 2 main --configfile config/test/test.yaml``:
``tests/workflow/golden/test_config.json`` holds the stage and library versions that made it, a
sha256 digest of every artefact's values (never file bytes: timing columns and provenance left
out) and a fingerprint of every weight tensor; ``tests/workflow/golden/tables/`` holds the result
tables themselves. A run on the same kernels matches the digests bit for bit; on another CPU make
or kernel path it is compared at the precision that holds across them (ehi/report/golden_tolerances.py
says which, and what was measured). A change that moves a number beyond that fails the golden test
until the version of the stage that moved is bumped (ehi/core/versions.py) and the golden updated
in the same commit, or, where the test config itself changed (it is recorded in the golden), the
golden updated:

    python tests/workflow/digests.py            # runs the command above in a temporary directory
    python tests/workflow/digests.py RUN_DIR    # or digests a finished run of it

Either refuses to record a moved digest when neither a version its file depends on was bumped nor
the test config changed.
"""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from ehi.core.io import read_provenance, write_json
from ehi.core.kernels import kernel_environment, pin_kernels

from ehi.core.versions import KIND_STAGE, VERSIONS, upstream_versions
from ehi.report.golden_tolerances import compare_table, compare_weights, tensor_fingerprint

pin_kernels()  # the golden records the kernels the pipeline's jobs run on
REPO = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden" / "test_config.json"
GOLDEN_TABLES = GOLDEN.parent / "tables"
# two cores, as the workflow test's run: torch's thread count moves the last bits of trained weights
TEST_CONFIG = REPO / "config" / "test" / "test.yaml"
COMMAND = ["--cores", "2", "main", "--configfile", str(TEST_CONFIG)]
TIMING_COLUMNS = {"qps", "seconds", "items_per_second", "threads"}
# The golden holds for these library versions (bit for bit on one kernel path, to golden_tolerances'
# tolerances across CPUs and kernel paths), not across them.
LIBRARIES = ("torch", "numpy", "faiss-cpu", "scann", "transformers", "ranx", "scipy")


def result_tables(workdir: Path, dataset: str = "test", variant: str = "main") -> dict[str, pd.DataFrame]:
    """Every Parquet result of one variant and its runs, minus the columns that time things."""
    root = workdir / "results" / dataset / variant
    runs = workdir / "resources" / dataset / variant / "runs"
    out = {}
    for path in sorted(root.rglob("*.parquet")) + sorted(runs.glob("*.parquet")):
        if "timings" in path.parts or "qps" in path.parts:
            continue  # wall-clock measurements, not results
        df = pd.read_parquet(path)
        out[str(path.relative_to(workdir))] = df.drop(columns=[c for c in df.columns if c in TIMING_COLUMNS])
    return out


def weight_files(workdir: Path, dataset: str = "test", variant: str = "main") -> list[Path]:
    """The trained weights of every model of the variant (not the checkpoints they came from, nor the
    links to them kept in previous/)."""
    train_dirs = sorted((workdir / "resources" / dataset / variant).glob("*/train"))
    return [p for d in train_dirs for p in sorted(d.rglob("*.safetensors"))
            if not {"checkpoint", "previous"} & set(p.relative_to(d).parts)]


def frame_digest(df: pd.DataFrame) -> str:
    """sha256 of a frame's columns and values; text columns by value, whatever dtype holds them."""
    h = hashlib.sha256(f"rows={len(df)}".encode())
    for name in df.columns:
        values = df[name].to_numpy()
        if values.dtype.kind in "biuf":
            h.update(f"\0{name}\0{values.dtype.str}\0".encode() + np.ascontiguousarray(values).tobytes())
        else:  # object / str / category: None and NaN as one marker
            h.update(f"\0{name}\0text\0".encode() + "\x1f".join("\x1e" if pd.isna(v) else str(v) for v in values).encode())
    return h.hexdigest()


def tensors_digest(path: Path) -> str:
    from safetensors.numpy import load_file

    tensors = load_file(path)
    h = hashlib.sha256()
    for name in sorted(tensors):
        arr = np.ascontiguousarray(tensors[name])
        h.update(f"\0{name}\0{arr.dtype.str}\0{arr.shape}\0".encode() + arr.tobytes())
    return h.hexdigest()


def run_tables(workdir: Path) -> dict[str, pd.DataFrame]:
    """Every result table the golden holds: the variant's results and runs, and the significance."""
    significance = workdir / "results" / "test" / "significance.parquet"
    return {**result_tables(workdir), str(significance.relative_to(workdir)): pd.read_parquet(significance)}


def stage_of(workdir: Path, name: str) -> str:
    return "evaluate" if name.endswith("significance.parquet") else KIND_STAGE[read_provenance(workdir / name)["kind"]]


def weight_fingerprints(path: Path) -> dict[str, dict]:
    from safetensors.numpy import load_file

    return {name: tensor_fingerprint(arr) for name, arr in sorted(load_file(path).items())}


def run_digests(workdir: Path) -> dict[str, dict]:
    """{path in the run: {"stage": the stage that writes it, "sha256": digest of its values}}; weight
    files also carry "tensors", a fingerprint per tensor (golden_tolerances.tensor_fingerprint)."""
    out = {name: {"stage": stage_of(workdir, name), "sha256": frame_digest(df)} for name, df in run_tables(workdir).items()}
    for path in weight_files(workdir):
        out[str(path.relative_to(workdir))] = {"stage": "train", "sha256": tensors_digest(path),
                                               "tensors": weight_fingerprints(path)}
    return out


def golden_table_path(name: str) -> Path:
    return GOLDEN_TABLES / (name.replace("/", "__"))


def environment() -> dict:
    versions = {}
    for lib in LIBRARIES:
        try:
            versions[lib] = metadata.version(lib)
        except metadata.PackageNotFoundError:
            versions[lib] = None
    return {**versions, "python": platform.python_version(), **kernel_environment()}


def load_golden() -> dict:
    return json.loads(GOLDEN.read_text())


def run_config() -> dict:
    """The test config as parsed (its comments and layout are no change of the run)."""
    return yaml.safe_load(TEST_CONFIG.read_text())


def mismatches(golden: dict, digests: dict[str, dict], tables: dict[str, pd.DataFrame] | None = None,
               versions: dict[str, int] = VERSIONS) -> list[str]:
    """What differs between a run and the golden beyond golden_tolerances' tolerances, each with what to
    do about it. An artefact whose exact digest matches is equal; one whose digest moved is compared
    at tolerance (``tables``: the run's result tables, from :func:`run_tables`)."""
    problems = []
    if golden["versions"] != versions:
        moved = sorted(k for k in {**versions, **golden["versions"]} if golden["versions"].get(k) != versions.get(k))
        problems.append(f"stage versions {moved} differ from the golden's: update it (python tests/workflow/digests.py)")
    for name in sorted(set(golden["digests"]) ^ set(digests)):
        problems.append(f"{name}: {'missing from the run' if name in golden['digests'] else 'not in the golden'}")
    for name in sorted(set(golden["digests"]) & set(digests)):
        if golden["digests"][name]["sha256"] == digests[name]["sha256"]:
            continue
        if "tensors" in golden["digests"][name]:
            moved = compare_weights(name, golden["digests"][name]["tensors"], digests[name]["tensors"])
        elif tables is not None and golden_table_path(name).exists():
            moved = compare_table(name, pd.read_parquet(golden_table_path(name)), tables[name])
        else:
            moved = [f"{name}: values moved (no golden table to compare at tolerance)"]
        if moved:
            stage = digests[name]["stage"]
            problems += moved + [f"{name}: if on purpose, bump a version of {list(upstream_versions(stage))} in "
                                 "ehi/core/versions.py and update the golden in the same commit, saying why in its message"]
    return problems


def unbumped_moves(golden: dict, digests: dict[str, dict], versions: dict[str, int] = VERSIONS) -> list[str]:
    """Files whose values moved although no version they depend on changed since the golden."""
    return [name for name, new in sorted(digests.items())
            if name in golden["digests"] and golden["digests"][name]["sha256"] != new["sha256"]
            and upstream_versions(new["stage"], golden["versions"]) == upstream_versions(new["stage"], versions)]


def update(workdir: Path) -> None:
    digests = run_digests(workdir)
    golden = load_golden() if GOLDEN.exists() else None
    # moves on other kernels are expected, and so are moves of a changed test config (a golden that
    # does not record its config cannot show it unchanged)
    if golden is not None and golden["environment"] == environment() and golden.get("config") == run_config():
        refused = unbumped_moves(golden, digests)
        if refused:
            raise SystemExit("values moved without a stage version bump or a test config change, golden left as "
                             "it is:\n  " + "\n  ".join(refused))
    for old in GOLDEN_TABLES.glob("*.parquet"):
        old.unlink()
    GOLDEN_TABLES.mkdir(parents=True, exist_ok=True)
    for name, df in run_tables(workdir).items():
        df.to_parquet(golden_table_path(name), index=False)
    write_json({"command": "snakemake " + " ".join(COMMAND).replace(str(REPO) + "/", ""), "versions": VERSIONS,
                "environment": environment(), "config": run_config(), "digests": digests}, GOLDEN)
    print(f"wrote {GOLDEN} ({len(digests)} digests)")


def main(argv: list[str]) -> None:
    if argv:
        update(Path(argv[0]))
        return
    with tempfile.TemporaryDirectory() as tmp:
        snakefile = ["--snakefile", str(REPO / "Snakefile"), "--directory", tmp]
        subprocess.run([sys.executable, "-m", "snakemake", *snakefile, *COMMAND], check=True)
        update(Path(tmp))


if __name__ == "__main__":
    main(sys.argv[1:])
