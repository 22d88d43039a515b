"""A prepared dataset's facts, kept beside its results: what a report reads of the data itself.

The prepared tables live under resources/ (git-ignored, absent on a fresh clone); the report rules
that compare datasets read their sizes (documents N, queries per split) and, for a synthetic vector
world, the world's knobs, from ``results/<dataset>/data.json``, which rule ``data_facts`` writes from
the data manifest and is committed with the results. Nothing in it changes unless the data does.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow.parquet as pq

from ehi.core.io import read_json_object, write_json
from ehi.data.validate import DataError

FACTS = "data.json"


def data_facts(data_dir: str | os.PathLike, source: str | os.PathLike | None = None) -> dict:
    """The facts of the dataset prepared in ``data_dir`` (its manifest and corpus table); ``source``:
    the folder it was read from, whose embeddings manifest names a world's knobs when a world wrote it."""
    from ehi.data.embeddings import MANIFEST as EMBEDDINGS
    from ehi.data.manifest import MANIFEST

    data_dir = Path(data_dir)
    manifest = read_json_object(data_dir / MANIFEST, DataError)
    facts = {"dataset": manifest["dataset"], "documents": pq.read_metadata(data_dir / "corpus.parquet").num_rows,
             "queries_per_split": manifest["queries_per_split"]}
    produced = Path(source) / EMBEDDINGS if source else None
    if produced is not None and produced.is_file():
        world = read_json_object(produced, DataError).get("world")
        if world:
            facts["world"] = world
    return facts


def write_data_facts(data_dir, out: str | os.PathLike, source=None) -> Path:
    return write_json(data_facts(data_dir, source), out)


def read_data_facts(path: str | os.PathLike) -> dict:
    """``data.json`` as :func:`data_facts` wrote it; a missing or malformed one names the file."""
    facts = read_json_object(path, DataError)
    for key in ("documents", "queries_per_split"):
        if key not in facts:
            raise DataError(f"{path}: no {key!r}; rule data_facts writes it from the prepared dataset")
    return facts
