"""Committed tables never go stale: every committed result set, re-rendered from its committed
Parquet files alone (`snakemake --cores 1 tables claims` with its own config, on a copy of
results/ without its tables and figures), gives the committed tables, CSVs and TeX files byte for
byte (the figures are rendered too, and must render). A renderer change without a re-render of what it renders fails here, naming the
file that moved.

Re-render after changing a renderer (each command as in COMMITTED below):

    snakemake --cores 1 tables claims --configfile config/config.yaml
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SNAKEMAKE = [str(Path(sys.executable).with_name("snakemake")), "--snakefile", str(REPO / "Snakefile")]
# each committed result set and the configs that made it, as a user re-renders it
COMMITTED = {
    "synthetic": ["config/config.yaml"],
    "scifact": ["config/scifact.yaml", "config/scifact_dexml.yaml"],
    "multilabel": ["config/dexml.yaml"],
    "frozen_encoder": ["config/frozen_encoder.yaml"],
    "scale_study": ["config/scale_study.yaml"],  # the worlds, and the gain tables over them and the frozen collections
    "scale_joint": ["config/scale_joint.yaml"],
    "webster": ["config/webster.yaml"],  # the real collection at 10^5 and its training-query axis
    "webster_joint": ["config/webster_joint.yaml"],  # joint and two-stage training from DE, three seeds
    "webster_joint_rates": ["config/webster_joint_rates.yaml"],  # the rate grid as one dataset a rate
    "webster_joint_mlp": ["config/webster_joint_mlp.yaml"],  # the residual MLP tower
}
RENDERED = ("tables", "figures")  # both left out of the copy; tables, CSVs and TeX compared byte for byte


def _render(configs: list[str], workdir: Path) -> subprocess.CompletedProcess:
    shutil.copytree(REPO / "results", workdir / "results",
                    ignore=lambda d, names: [n for n in names if Path(d).name == "results" and n in RENDERED])
    # configs name collections relative to the checkout (../shared/data): the same layout here
    (workdir / "config").symlink_to(REPO / "config")
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    cmd = [*SNAKEMAKE, "--directory", str(workdir), "--cores", "1", "tables", "claims",
           "--configfile", *[str(REPO / c) for c in configs]]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO)


def _moved(workdir: Path) -> list[str]:
    moved = []
    for kind in ("tables",):
        for path in sorted((workdir / "results" / kind).rglob("*")):
            if path.is_dir() or "_timings." in path.name or path.suffix == ".html":  # git-ignored: timings change
                # every run, the HTML is the report's view of the .md/.csv
                continue
            rel = path.relative_to(workdir)
            committed = REPO / rel
            if not committed.exists():
                moved.append(f"{rel}: rendered but not committed")
            elif committed.read_bytes() != path.read_bytes():
                moved.append(f"{rel}: differs from the committed file")
    return moved


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(COMMITTED))
def test_committed_tables_re_render_byte_identical(name, tmp_path):
    done = _render(COMMITTED[name], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    rendered = [p for kind in RENDERED for p in (tmp_path / "results" / kind).rglob("*") if p.is_file()]
    assert rendered, "the report rendered nothing"
    moved = _moved(tmp_path)
    assert not moved, ("stale committed tables (re-render with `snakemake --cores 1 tables claims "
                       f"--configfile {' '.join(COMMITTED[name])}`):\n" + "\n".join(moved))
