"""ehi installs into an existing environment: `dependencies` name compatible ranges (another torch 2.x,
a CUDA build, is kept), the exact tested set is constraints.txt, test-only readers sit in [test]
and the SLURM executor in [slurm]."""

import re
import tomllib
from pathlib import Path

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


def test_constraints_pin_every_runtime_dependency_within_its_range():
    pins = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        if m := re.match(r"^([A-Za-z0-9_.\-]+)==(\S+)", line.strip()):
            pins[m.group(1).lower().replace("_", "-")] = m.group(2)
    for name, requirement in RUNTIME.items():
        assert name in pins, f"constraints.txt pins no {name}"
        assert requirement.specifier.contains(pins[name], prereleases=True), (name, pins[name], str(requirement))
