"""A finished run stays finished when the checkout moves: the rules' code records neither the
checkout's place nor the interpreter's path (Snakemake reruns a job whose shell command or inputs
changed), so copying the code and the run elsewhere plans nothing."""

import os
import shutil
import subprocess
import sys

from tests.workflow.test_workflow import REPO

CODE = ("Snakefile", "workflow", "config", "ehi")  # what the DAG reads of the checkout


def test_a_moved_checkout_and_run_plan_nothing(test_config_run, tmp_path):
    checkout, run = tmp_path / "elsewhere", tmp_path / "elsewhere_run"
    for part in CODE:  # copy2 keeps the files' times, as `cp -a` of a clone does
        source = REPO / part
        if source.is_dir():
            shutil.copytree(source, checkout / part, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            checkout.mkdir(exist_ok=True)
            shutil.copy2(source, checkout / part)
    shutil.copytree(test_config_run.workdir, run, symlinks=True)
    recorded = "\n".join(p.read_text(errors="replace") for p in (run / ".snakemake" / "metadata").iterdir())
    assert str(REPO) not in recorded and sys.executable not in recorded  # nothing of where it ran
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--snakefile", str(checkout / "Snakefile"), "--directory",
                           str(run), "-n", "all", "--configfile", str(checkout / "config" / "test" / "test.yaml")],
                          capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}, timeout=600)
    said = proc.stdout + proc.stderr
    assert "Nothing to be done" in said, said[-3000:]
