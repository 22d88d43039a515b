"""ehi installs into an existing environment: `dependencies` name compatible ranges (another torch 2.x,
a CUDA build, is kept), the exact tested set is constraints.txt, the pipeline sits in [pipeline], ScaNN in [scann], test-only readers in [test]
and the SLURM executor in [slurm]; pip, asked to install ehi beside a torch 2.x, keeps it."""

import json
import os
import re
import subprocess
import sys
import sysconfig
import tomllib
import venv
from pathlib import Path

import pytest
from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
RUNTIME = {Requirement(r).name.lower(): Requirement(r) for r in PROJECT["dependencies"]}
TEST_ONLY = {"pytest", "pytest-timeout", "sentence-transformers", "ir-measures", "pytrec-eval-terrier", "ruff"}


def test_no_runtime_dependency_is_pinned_to_one_release():
    pinned = [str(r) for r in RUNTIME.values() if any(s.operator in ("==", "===") for s in r.specifier)]
    assert not pinned, pinned


def test_any_torch_2_release_satisfies_the_range():
    torch = RUNTIME["torch"].specifier
    assert all(torch.contains(v) for v in ("2.4.0", "2.5.1", "2.9.0", "2.13.0", "2.15.0"))
    assert not torch.contains("3.0.0")  # a major release may break the API: not taken blindly


def test_test_only_packages_and_the_slurm_plugin_are_extras():
    extras = {k: {Requirement(r).name.lower() for r in v} for k, v in PROJECT["optional-dependencies"].items()}
    assert TEST_ONLY <= extras["test"] and not TEST_ONLY & set(RUNTIME)
    assert "snakemake-executor-plugin-slurm" in extras["slurm"] and "snakemake-executor-plugin-slurm" not in RUNTIME


def test_constraints_pin_every_runtime_and_pipeline_dependency_within_its_range():
    pins = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        if m := re.match(r"^([A-Za-z0-9_.\-]+)==(\S+)", line.strip()):
            pins[m.group(1).lower().replace("_", "-")] = m.group(2)
    extras = PROJECT["optional-dependencies"]
    pipeline = {Requirement(r).name.lower(): Requirement(r) for r in extras["pipeline"] + extras["scann"]}
    for name, requirement in {**RUNTIME, **pipeline}.items():
        assert name in pins, f"constraints.txt pins no {name}"
        assert requirement.specifier.contains(pins[name], prereleases=True), (name, pins[name], str(requirement))


def _pip_would_install(torch_version: str, tmp_path) -> subprocess.CompletedProcess:
    """``pip install --dry-run -e .`` into a fresh environment that sees this one's packages (a .pth
    file) but has torch ``torch_version`` installed in front of them (its metadata only): pip's own
    resolver, offline and without this machine's pip config, says what it would install."""
    env_dir = tmp_path / "env"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    site = Path(subprocess.check_output([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                        text=True).strip())
    (site / "host.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    dist = site / f"torch-{torch_version}.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch\nVersion: {torch_version}\n")
    (dist / "RECORD").write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")} | {"PIP_CONFIG_FILE": os.devnull}
    return subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--dry-run", "--no-index",
                           "--no-build-isolation", "--quiet", "--report", "-", "-e", str(REPO)],
                          capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.slow  # an install
def test_pip_install_e_keeps_the_torch_2_an_environment_has(tmp_path):
    kept = _pip_would_install("2.5.1", tmp_path / "kept")
    assert kept.returncode == 0, kept.stderr[-2000:]
    assert [i["metadata"]["name"] for i in json.loads(kept.stdout)["install"]] == ["ehi"]  # torch 2.5.1 stays
    replaced = _pip_would_install("1.13.1", tmp_path / "replaced")  # outside the range: pip must fetch a torch
    assert replaced.returncode != 0, replaced.stdout[-2000:]
    assert "No matching distribution found for torch" in replaced.stderr, replaced.stderr[-2000:]
