"""A collection built by its own script (rule ``build_collection``), and the record that tells
whether the script that built it is still the one the config names.

The script runs into ``<out>.partial`` and the result replaces ``<out>`` only when it succeeded
(:func:`ehi.core.io.replace_dir`), and the rule's output is an ``update()`` one, so a failing or
killed build leaves the previous collection as it was. Each build leaves ``.produced.json`` in the
folder: the script's path, its sha256 and its arguments. A rerun whose script and arguments match the
record keeps the folder (nothing downstream is rebuilt from new bytes), and a parse that finds the
script edited in place dates the folder back (:func:`outdate_changed_builds`), which Snakemake reads
as a changed rule script and rebuilds; the rule's params stay the script's path and its arguments.
A folder built before records were written is not compared, until its next build.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

from ehi.core.errors import UserError

log = logging.getLogger(__name__)
RECORD = ".produced.json"  # a dot file: the dataset's manifest leaves it out of its source files


def build_identity(script: str | os.PathLike, args: list | None) -> dict:
    """What a build is made of: the script's path and content, and its arguments."""
    from ehi.core.io import file_sha256

    return {"script": str(script), "script_sha256": file_sha256(script), "args": [str(a) for a in args or []]}


def recorded_build(folder: str | os.PathLike) -> dict | None:
    """The record a build left in ``folder``, or None (no record, or not one of ours)."""
    try:
        record = json.loads((Path(folder) / RECORD).read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def run_build_script(script: str, out: str, args: list[str] | None = None) -> bool:
    """Run a collection's build script (``python SCRIPT OUT [ARGS]``) into ``OUT.partial`` and move
    the result into place only when the script succeeded. Return False where ``out`` was built by
    the same script and arguments already and is kept as it is."""
    from ehi.core.io import recover_aside, replace_dir, write_json

    target = Path(out)
    recover_aside(target)
    if not Path(script).is_file():
        raise UserError(f"collections: build script {script} not found")
    wanted = build_identity(script, args)
    if target.is_dir() and recorded_build(target) == wanted:
        log.info("%s: built by this script and these arguments already; kept as it is", target)
        return False
    work = target.with_name(target.name + ".partial")
    shutil.rmtree(work, ignore_errors=True)
    done = subprocess.run([sys.executable, str(script), str(work), *map(str, args or [])])
    if done.returncode != 0 or not work.is_dir():
        shutil.rmtree(work, ignore_errors=True)
        why = f"exited with status {done.returncode}" if done.returncode else f"wrote no folder {work}"
        raise UserError(f"collections: {script} {why} (its output is above); {target} is kept as it was")
    write_json(wanted, work / RECORD)
    replace_dir(work, target)
    return True


def changed_builds(collections: dict, root: str | os.PathLike) -> dict[Path, str]:
    """{folder: why} of each built collection whose record names another script content than its
    ``collections`` entry's script has now (changed arguments are changed params: Snakemake sees them)."""
    changed = {}
    for name, entry in collections.items():
        folder, script = Path(root) / name, Path(entry["script"])
        record = recorded_build(folder)
        if record is None or not script.is_file():
            continue  # never built here, built before records, or a missing script the job names
        if record.get("script_sha256") != build_identity(script, entry.get("args"))["script_sha256"]:
            changed[folder] = f"{script} changed since it built the collection"
    return changed


def outdate_changed_builds(collections: dict, root: str | os.PathLike) -> dict[Path, str]:
    """Date back to the epoch each collection :func:`changed_builds` names (the folder and the
    timestamp file Snakemake keeps in it): older than the rule's script, so Snakemake rebuilds it."""
    from ehi.core.unfinished import date_back

    changed = changed_builds(collections, root)
    for folder in changed:
        date_back(folder)
    return changed
