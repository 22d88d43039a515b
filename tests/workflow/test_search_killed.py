"""A search killed (SIGKILL) while it runs: its run and QPS table stay as they were, and the next
dry run plans the search and the evaluation again (workflow/rules/search.smk, ehi/core/unfinished.py)."""

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.workflow.test_workflow import SNAKEMAKE, TEST_CONFIG, jobs_of, snakemake

TARGET = "results/test/main/per_query/pre+exact.parquet"
OUTPUTS = ("resources/test/main/runs/pre+exact.parquet", "results/test/main/qps/pre+exact.parquet")
MARKER = "logs/test/main/search_pre+exact.unfinished"


def _search_script(workdir: Path) -> int | None:
    """The pid of the search job's interpreter (Snakemake runs ``.snakemake/scripts/tmp*.search.py``)."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        # the script's path as an argument of its own: the interpreter, not the shell that starts it
        if any(a.startswith(str(workdir / ".snakemake/scripts").encode()) and a.endswith(b".search.py") for a in argv):
            return int(proc.name)
    return None


@pytest.mark.slow
def test_a_search_killed_keeps_its_outputs_and_the_next_run_searches_again(tmp_path):
    args = (TARGET, "--cores", "1", "--configfile", TEST_CONFIG)
    snakemake(*args, workdir=tmp_path)
    before = {name: (tmp_path / name).read_bytes() for name in OUTPUTS}
    assert jobs_of(snakemake("-n", *args, workdir=tmp_path).stdout) == set()

    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    job = subprocess.Popen([*SNAKEMAKE, "--directory", str(tmp_path), *args, "--forcerun", "search"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    deadline = time.monotonic() + 300
    while _search_script(tmp_path) is None:
        assert job.poll() is None and time.monotonic() < deadline, "no search job started"
        time.sleep(0.02)
    began = time.monotonic()
    while not (tmp_path / MARKER).exists() and time.monotonic() < began + 3:  # killed once it holds its marker
        time.sleep(0.02)
    os.kill(_search_script(tmp_path), signal.SIGKILL)
    assert job.wait(timeout=300) != 0

    assert {name: (tmp_path / name).read_bytes() for name in OUTPUTS} == before  # nothing lost, the committed QPS included
    assert {"search", "evaluate"} <= jobs_of(snakemake("-n", *args, workdir=tmp_path).stdout)
    snakemake(*args, workdir=tmp_path)
    assert not (tmp_path / MARKER).exists() and jobs_of(snakemake("-n", *args, workdir=tmp_path).stdout) == set()
