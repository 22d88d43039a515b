"""Folders a dataset names that the DAG makes itself: built collections and encoded collections.

A config's ``dataset.path`` (and ``encoder.name``, for the identity tower over vectors) may name a
folder that a rule writes rather than one made by hand:

- ``collections: {name: {script: build.py}}``: rule ``build_collection`` runs the script into
  ``resources/sources/<name>/`` (a BEIR folder), as ``../shared/data/webster/build.py`` builds webster;
- ``encodings: {name: {collection: DIR, encoder: MODEL, max_length: N}}``: rule
  ``encode_collection`` encodes a text collection once into ``resources/vectors/<name>/`` (the
  embeddings layout, :mod:`ehi.data.encode_collection`).

:func:`produced_inputs` gives the rule outputs a dataset's preparation waits for, so a fresh clone
plans the whole chain (build, encode, prepare, ...) as jobs of one DAG.
"""

from __future__ import annotations

import os
from pathlib import PurePosixPath

# config key -> the folder its entries are written under
PRODUCED_ROOTS = {"collections": "resources/sources", "encodings": "resources/vectors"}


def _norm(path) -> str:
    return os.path.normpath(str(path)) if path else ""


def produced_folders(config: dict) -> dict[str, tuple[str, str]]:
    """{folder: (config key, entry name)} of every folder the config's producers write."""
    out = {}
    for key, root in PRODUCED_ROOTS.items():
        for name in config.get(key) or {}:
            out[_norm(PurePosixPath(root) / name)] = (key, name)
    return out


def produced_inputs(config: dict) -> list[str]:
    """The produced folders this dataset reads: its ``dataset.path`` and a vector ``encoder.name``."""
    folders = produced_folders(config)
    named = [config.get("dataset", {}).get("path"), config.get("encoder", {}).get("name")]
    return sorted({_norm(p) for p in named if p and _norm(p) in folders})


def collection_of(config: dict, encoding: str) -> str:
    """The collection folder an encoding reads (a produced one is then an input of its job)."""
    return _norm(config["encodings"][encoding]["collection"])


def run_build_script(script: str, out: str, args: list[str] | None = None) -> None:
    """Run a collection's build script (``python SCRIPT OUT [ARGS]``) into ``OUT.partial`` and move
    the result into place only when the script succeeded."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    from ehi.core.errors import UserError

    target = Path(out)
    work = target.with_name(target.name + ".partial")
    shutil.rmtree(work, ignore_errors=True)
    if not Path(script).is_file():
        raise UserError(f"collections: build script {script} not found")
    done = subprocess.run([sys.executable, str(script), str(work), *map(str, args or [])])
    if done.returncode != 0:
        shutil.rmtree(work, ignore_errors=True)
        raise UserError(f"collections: {script} exited with status {done.returncode} (its output is above)")
    shutil.rmtree(target, ignore_errors=True)
    os.replace(work, target)
