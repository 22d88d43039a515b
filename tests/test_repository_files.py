"""What the repository holds: no Snakemake bookkeeping committed, the test config's results ignored."""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(),
                                reason="needs the git checkout")


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)


def test_no_snakemake_timestamp_is_committed():
    tracked = _git("ls-files").stdout.splitlines()
    assert [p for p in tracked if p.endswith(".snakemake_timestamp")] == []


@pytest.mark.parametrize("path", ["results/test/main/metrics.parquet", "results/figures/x/.snakemake_timestamp"])
def test_run_outputs_that_stay_local_are_ignored(path):
    assert _git("check-ignore", "-q", "--no-index", path).returncode == 0, path
