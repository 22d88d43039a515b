"""A second ``ehi compare`` at the --out of a running one is refused in one line before it touches
anything of the running call: its pending config and its ``compare.log`` stay as they are."""

import signal
import subprocess
import sys
import time

import pytest

from ehi.core.errors import ConfigError
from ehi.data.vector_world import WorldConfig, generate_world
from ehi.serve import compare as compare_module
from ehi.serve.cli import main

# the first call: a real compare() whose pipeline writes its console and then runs on
RUNNING = """
import sys, time
from pathlib import Path
from ehi.serve import compare as c
def pipeline(command, log_path=None, show=None):
    Path(log_path).write_text("the first call's console\\n")
    Path(sys.argv[2], "ready").touch()
    time.sleep(120)
    return 0
c.run_owned = pipeline
sys.exit(c.compare(sys.argv[1], out=Path(sys.argv[2], "out")))
"""


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    out = tmp_path_factory.mktemp("vectors") / "vecs"
    generate_world(out, WorldConfig(n_docs=100, dim=8, n_train=20, n_dev=10, n_test=10))
    return out


def _files(folder):
    return {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_a_second_call_at_the_same_out_is_refused_without_touching_the_first(world, tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    first = subprocess.Popen([sys.executable, "-c", RUNNING, str(world), str(tmp_path)])
    try:
        for _ in range(600):
            if (tmp_path / "ready").exists() or first.poll() is not None:
                break
            time.sleep(0.1)
        assert (tmp_path / "ready").exists(), "the first call did not start"
        before = _files(out)
        assert (out / "resources" / "vecs" / "compare.pending.yaml").is_file() and (out / "compare.log").is_file()
        started = []
        monkeypatch.setattr(compare_module, "run_owned", lambda command, *_: started.append(command) or 0)
        for extra in ([], ["-n"], ["--unlock"]):
            with pytest.raises(ConfigError) as err:
                compare_module.compare(world, extra=extra, out=out)
            assert str(err.value) == (f"--out {out}: another ehi compare is running there (process {first.pid}); "
                                      "wait for it to end, or give this one another --out")
        with pytest.raises(SystemExit) as exc:
            main(["compare", str(world), "--out", str(out)])
        assert str(exc.value.code).startswith(f"ehi compare: error: --out {out}: another ehi compare is running")
        assert started == [] and _files(out) == before
    finally:
        first.send_signal(signal.SIGKILL)  # as kill -9: the system releases its lock
        first.wait(timeout=30)
    assert compare_module.compare(world, out=out) == 0 and len(started) == 1
