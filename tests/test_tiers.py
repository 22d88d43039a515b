"""The three tiers (tests/tiers.py) partition the collection: each test is in exactly one of the
default set, ``-m integration`` and ``-m slow``, and the full command (README.md, .ci/run) runs all
three, so splitting the suite drops no test."""

import re
import shlex
import tomllib
from pathlib import Path

from _pytest.mark.expression import Expression

from tests.tiers import TIERS, is_snakemake, starts_snakemake
from tests import test_docs_paths
from tests.workflow import runs

REPO = Path(__file__).resolve().parents[1]
FULL = 'python -m pytest -m "" --durations=25'  # -m "" lifts the default selection


def default_expression() -> str:
    addopts = shlex.split(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["addopts"])
    return addopts[addopts.index("-m") + 1]


def selects(expression: str, tier: str | None) -> bool:
    return Expression.compile(expression).evaluate(lambda name, **_: name == tier)


def test_each_collected_test_is_in_exactly_one_tier(request):
    tiers = request.config.stash[TIERS]  # every test collected in this session, before -m
    assert tiers and set(tiers.values()) <= {None, "integration", "slow"}
    for tier in (None, "integration", "slow"):
        chosen = [e for e in (default_expression(), "integration", "slow") if selects(e, tier)]
        assert len(chosen) == 1, (tier, chosen)


def test_the_full_command_runs_every_tier():
    readme = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text()
    assert re.search(rf"\.venv/bin/{re.escape(FULL)}\s*$", readme.split("# 2.")[1].split("```")[0])
    assert ci.rstrip().endswith(f".venv/bin/{FULL}")


def _the_shared_run(tmp_path):  # what a fixture of the shared run does
    return runs.run_test_config(tmp_path)


# held in a dict, not named in the test: a test that names a function starting Snakemake is read as calling it
READINGS = {runs.run_test_config: True,  # a global argv list and subprocess
            _the_shared_run: True,  # through a function of tests/
            runs.load_run: False,
            test_docs_paths.unknown_targets: False}  # "snakemake" only as a word it parses


def test_a_test_that_starts_snakemake_is_told_from_one_that_reads_a_snakemake_command():
    known = {}
    assert {func.__name__: starts_snakemake(func, known) for func in READINGS} == {
        func.__name__: starts for func, starts in READINGS.items()}
    assert is_snakemake(runs.SNAKEMAKE) and is_snakemake(["/venv/bin/snakemake", "-n"])
    assert not is_snakemake(["python", "-c", "import snakemake"])
