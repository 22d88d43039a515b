"""What made a result, and which part of that a committed file must hold.

Every Parquet result carries its provenance in its metadata (:func:`provenance`): the stage
versions that made its values, the config keys the writer adds, and the circumstances of the run
(:data:`CIRCUMSTANCES`: the CPU model and its kernel settings, the package version). The git
commit is no part of it: it is in the job's log (:func:`ehi.core.rule_script.setup`). A rerun whose values and
versions are a file's own leaves the file's bytes as they are, whatever its circumstances
(:func:`ehi.core.io.replace_parquet`; the rules keep their results in place for it, as ``update()``
outputs: workflow/rules/evaluate.smk), so after a rerun ``git status`` lists only the results whose
values changed.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from ehi.core import __version__
from ehi.core.kernels import cpu_model, kernel_settings
from ehi.core.versions import VERSIONS

PROVENANCE_KEY = b"ehi.provenance"
CODE_PATHS = ("ehi", "workflow", "config", "Snakefile", "pyproject.toml")  # what makes results, in the checkout
# how a file's bytes came about, not which values they hold: equal values keep the file when only these moved
# (the kernel settings pinned anew give the same values on this CPU; a package release changes none;
# another CPU giving the same values is a reproduction, which ehi/report/reproduction.py reads the CPU for)
CIRCUMSTANCES = ("cpu", "kernels", "ehi_version")


def git_commit() -> str:
    """The newest commit of this checkout that changed the code making results (CODE_PATHS), or
    ``unknown`` outside a git checkout. Not HEAD: results committed on their own would otherwise
    never match the commit a fresh clone reruns them at."""
    try:
        out = subprocess.run(
            ["git", "log", "-1", "--format=%H", "--", *CODE_PATHS],
            cwd=Path(__file__).resolve().parents[2],
            capture_output=True,
            text=True,
            timeout=5,
        )
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def provenance(**extra) -> dict:
    """What made a result: package version, the implementation version of every stage
    (:data:`ehi.core.versions.VERSIONS`), the CPU model and the kernel settings in force
    (ehi.core.kernels; null where a setting was left to the machine), plus whatever the caller adds
    (config, seed)."""
    return {"ehi_version": __version__, "versions": dict(VERSIONS), "cpu": cpu_model(), "kernels": kernel_settings(),
            **extra}


def identity(raw: bytes) -> dict:
    """A stored provenance (the metadata's JSON) without its circumstances: what must match for a
    file's bytes to be kept."""
    return {k: v for k, v in json.loads(raw).items() if k not in CIRCUMSTANCES}
