"""The test config's whole DAG, run once per test session (the ``test_config_run`` fixture of
tests/conftest.py) and shared by every test that reads a finished run: the workflow tests, the
figures' style contract on the figures it drew, its console.

The run records its console (Snakemake's stdout and stderr, as a user sees them) and, through
figure_probe/sitecustomize.py, the style facts of every figure its jobs saved, under one folder
(run/, console.txt, figure_facts/): EHI_TEST_CONFIG_RUN naming such a folder of a finished run
reuses it instead (a developer rerunning a few of these tests on unchanged code)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SNAKEMAKE = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile")]
TEST_CONFIG = str(REPO / "config" / "test" / "test.yaml")
PROBE = Path(__file__).resolve().parent / "figure_probe"
QUIET = ["--quiet", "rules", "host"]  # the README's main command: a line a job, the jobs' own lines


@dataclass(frozen=True)
class Run:
    workdir: Path
    console: list[str]  # the lines a user sees, stdout and stderr interleaved as they came
    figure_facts: Path  # a folder of one JSON per saved figure (figure_probe/sitecustomize.py)

    def figures(self) -> list[dict]:
        return [json.loads(p.read_text()) for p in sorted(self.figure_facts.glob("*.json"))]


def run_test_config(root: Path, cores: int = 2, timeout: int = 1800) -> Run:
    """``snakemake all`` on the test config in ``root``/run: a failed run fails with its console's end."""
    workdir, facts = root / "run", root / "figure_facts"
    workdir.mkdir()
    facts.mkdir()
    path = os.pathsep.join(p for p in (str(PROBE), str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PYTHONPATH": path,
           "EHI_FIGURE_PROBE": str(facts)}
    proc = subprocess.run([*SNAKEMAKE, "--directory", str(workdir), "all", "--cores", str(cores), *QUIET, "--configfile",
                           TEST_CONFIG], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                          timeout=timeout)
    (root / "console.txt").write_text(proc.stdout)
    if proc.returncode != 0:
        raise AssertionError(f"snakemake all --configfile {TEST_CONFIG} failed:\n{proc.stdout[-6000:]}")
    return load_run(root)


def load_run(root: Path) -> Run:
    """The run run_test_config left in ``root``."""
    return Run(root / "run", (root / "console.txt").read_text().splitlines(), root / "figure_facts")
