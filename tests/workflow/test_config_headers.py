"""The command in each shipped config's header comment, run verbatim as a dry run from the project
root: it plans its jobs, or (a collection this machine lacks) refuses in one line that names what it
needs; never a traceback. config/embeddings.yaml's names a vectors folder `mine`, made here."""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from ehi.data.vector_world import WorldConfig, generate_world
from tests.workflow.test_workflow import REPO

CONFIGS = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "config").rglob("*.yaml"))


def header_commands(text: str) -> list[str]:
    """The `snakemake ...` commands of a config's leading comment block (a command in backticks ends
    at its closing backtick; a line ending in a backslash goes on on the next)."""
    header = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        header.append(line.lstrip("#").strip())
    commands, joined = [], "\n".join(header).replace("\\\n", " ")
    for line in joined.splitlines():
        match = re.search(r"`(snakemake [^`]+)`|(?:^|:\s+)(snakemake .+)$", line)
        if match:
            commands.append(match.group(1) or match.group(2))
    return commands


def test_the_headers_commands_are_found():
    found = {c: header_commands((REPO / c).read_text()) for c in CONFIGS}
    assert found["config/embeddings.yaml"] == [
        "snakemake --snakefile \"$EHI/Snakefile\" --cores 2 all --configfile \"$EHI/config/embeddings.yaml\" "
        "--config 'dataset={name: mine, path: mine}' 'encoder={name: mine}'"]
    assert found["config/ablations.yaml"] == [
        "snakemake --cores 2 ablation_lambdas --configfile config/config.yaml config/ablations.yaml"]
    assert sum(map(len, found.values())) >= 15


@pytest.mark.slow
@pytest.mark.parametrize("config", [c for c in CONFIGS if header_commands((REPO / c).read_text())])
def test_each_configs_header_command_runs_verbatim(config, tmp_path):
    workdir = tmp_path / "work"
    generate_world(workdir / "mine", WorldConfig(n_docs=300, dim=16, n_train=60, n_dev=30, n_test=30))
    for command in header_commands((REPO / config).read_text()):
        words = [word.replace("$EHI", str(REPO)) for word in shlex.split(command)]  # EHI: the checkout
        proc = subprocess.run([sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"),
                               "--directory", str(workdir), "-n", *words[1:]], cwd=REPO, capture_output=True,
                              text=True, timeout=600)
        said = proc.stdout + proc.stderr
        assert "Traceback" not in said and "Invalid config definition" not in said, (command, said[-3000:])
        if proc.returncode != 0:  # a collection not on this machine: one line saying which and what it is
            errors = [line for line in said.splitlines() if "error:" in line]
            assert len(errors) == 1 and re.search(r"not a directory|not found|no such", errors[0], re.I), (command, said[-3000:])
        elif config == "config/embeddings.yaml":
            assert "train_ehi" in said and "claims" in said, said[-3000:]


def docs_config_equivalent() -> str:
    """docs/embeddings.md's config-equivalent command of the decisive run (its snakemake command,
    a line ending in a backslash going on on the next)."""
    text = (REPO / "docs" / "embeddings.md").read_text().replace("\\\n", " ")
    return next(line for line in text.splitlines() if line.startswith("snakemake ") and "embeddings_decisive.yaml" in line)


@pytest.mark.integration
def test_the_config_equivalent_runs_from_the_folder_that_holds_the_vectors(tmp_path):
    """The docs' command, as a user in the folder beside mine/ types it (EHI = the checkout), plans
    the study; in a folder without mine/ it is refused in one line naming the folder, with neither a
    traceback nor the Hugging Face cache."""
    command = docs_config_equivalent()
    header = header_commands((REPO / "config" / "embeddings_decisive.yaml").read_text())
    assert [" ".join(c.split()) for c in header] == [" ".join(command.split())]
    generate_world(tmp_path / "here" / "mine", WorldConfig(n_docs=300, dim=16, n_train=60, n_dev=30, n_test=30))
    (tmp_path / "empty").mkdir()
    env = {**os.environ, "EHI": str(REPO), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    said = {}
    for folder in ("here", "empty"):
        proc = subprocess.run(["bash", "-c", command + " -n"], cwd=tmp_path / folder, env=env, capture_output=True,
                              text=True, timeout=600)
        said[folder] = (proc.returncode, proc.stdout + proc.stderr)
    assert said["here"][0] == 0 and "train_ehi" in said["here"][1], said["here"][1][-3000:]
    code, text = said["empty"]
    errors = [line for line in text.splitlines() if "error:" in line]
    assert code != 0 and "Traceback" not in text and "Hugging Face" not in text, text[-3000:]
    assert errors == [f"snakemake: error: config dataset.path: no such folder: {tmp_path / 'empty' / 'mine'} "
                      f"('mine' read from the working directory {tmp_path / 'empty'})"], text[-3000:]
