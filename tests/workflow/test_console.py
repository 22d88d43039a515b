"""A rule script's console: its own stderr (C libraries writing to descriptor 2, Python warnings,
INFO lines) goes to the job's log file; the console keeps its warnings, errors and stdout."""

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import os, sys, warnings
    from types import SimpleNamespace
    sys.path.insert(0, {repo!r})
    from ehi.core.rule_script import setup
    log = setup(SimpleNamespace(log=[{log!r}], threads=1, rule="toy"))
    os.write(2, b"WARNING clustering 9 points to 4 centroids: please provide at least 156 training points\\n")
    warnings.warn("a library's deprecation")
    log.info("an info line")
    log.warning("the tree has empty leaves")
    print("a verdict table")
    raise SystemExit(0)
""")


def test_a_jobs_own_stderr_goes_to_its_log_and_warnings_reach_the_console(tmp_path, repo_root):
    log = tmp_path / "job.log"
    code = SCRIPT.format(repo=str(repo_root), log=str(log))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "a verdict table\n"
    console = proc.stderr.splitlines()
    assert len(console) == 1 and console[0].endswith("toy WARNING the tree has empty leaves"), console
    text = log.read_text()
    for line in ("please provide at least 156 training points", "a library's deprecation", "toy INFO an info line",
                 "toy WARNING the tree has empty leaves"):
        assert line in text, (line, text)


def test_an_error_still_reaches_the_console_as_one_line(tmp_path, repo_root):
    code = SCRIPT.format(repo=str(repo_root), log=str(tmp_path / "job.log")).replace(
        "raise SystemExit(0)", "from ehi.core.errors import DataError\nraise DataError('corpus.parquet: no rows')")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1].endswith("toy ERROR corpus.parquet: no rows")
    assert "corpus.parquet: no rows" in (tmp_path / "job.log").read_text()
