"""A manifest per prepared dataset: where it came from and the sha256 of every file involved.

``prepare_data`` writes ``manifest.json`` beside the three Parquet tables: the dataset config
(source, path, dev split seed and fraction), the package version, the queries per split (and, with
``dataset.query_split``, its fractions, seed, counts and the sha256 of each split's ids), and the
sha256 and size of each source file (a local copy's files, or the downloaded archives) and of each
prepared table, and for a download the checksums its archives were published with. :func:`check_manifest` runs whenever the workflow is parsed (``common.smk``; every
``snakemake`` call, dry runs and "nothing to be done" included): a source copy or a prepared table
that changed since preparation (or an archive its source now publishes with another checksum) stops
the run with the file named, instead of silently mixing
results of two versions of a dataset. The manifest is an output of ``prepare_data`` that the named
targets request, so deleting it, as the error advises, prepares the dataset again.

Hashing a large source on every run would be slow, so a file whose size, modification time and
status-change time (ctime) still match the manifest is taken as unchanged, as git's index does;
any other file is hashed. The ctime is what sees an edit in place that kept the size and set the
modification time back (``os.utime``, ``touch -d``): the system moves it on every write and every
``utime`` and no call sets it back. A file whose ctime moved without its content (a copy of the
folder, ``chmod``) is hashed on every parse until it is prepared again: 1.25 s for a 150 MB file
here (sha256, 2 busy cores), against a ``stat`` call for a file left alone.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ehi.core import __version__
from ehi.data.validate import DataError
from ehi.core.io import file_sha256, read_json_object, write_json

MANIFEST = "manifest.json"
TABLES = ("corpus.parquet", "queries.parquet", "qrels.parquet")


def file_record(path: Path) -> dict:
    st = path.stat()
    return {"sha256": file_sha256(path), "bytes": st.st_size, "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns}


def source_files(dataset_cfg: dict) -> list[Path]:
    """The files a dataset was read from: a local copy's files, else the source's download cache
    (nothing for the synthetic generator, whose config is the whole source)."""
    if dataset_cfg.get("source") == "synthetic":
        return []
    if dataset_cfg.get("path"):
        root = Path(dataset_cfg["path"]).expanduser()
    else:
        root = Path(dataset_cfg.get("cache_dir", "resources/downloads")).expanduser() / dataset_cfg["source"]
    if root.is_file():
        return [root]
    return sorted(p for p in root.rglob("*") if p.is_file() and not p.name.startswith("."))


def build_manifest(dataset_cfg: dict, data_dir: str | os.PathLike, split_counts: dict[str, int],
                   extra: dict | None = None) -> dict:
    """``extra``: further records, e.g. ``{"query_split": ...}`` (ehi.data.query_split.split_record)."""
    data_dir = Path(data_dir)
    return {
        "dataset": dataset_cfg.get("name"),
        "config": dataset_cfg,
        "ehi_version": __version__,
        "queries_per_split": {str(k): int(v) for k, v in split_counts.items()},
        "source_files": {str(p): file_record(p) for p in source_files(dataset_cfg)},
        "tables": {name: file_record(data_dir / name) for name in TABLES},
        # a downloaded dataset's published checksums (published_checksums); none for local copies
        **({"source_checksums": checksums} if (checksums := published_checksums(dataset_cfg)) else {}),
        **(extra or {}),
    }


def write_manifest(dataset_cfg: dict, data_dir: str | os.PathLike, split_counts: dict[str, int],
                   extra: dict | None = None) -> Path:
    path = Path(data_dir) / MANIFEST
    write_json(build_manifest(dataset_cfg, data_dir, split_counts, extra), path)
    return path


def staging_key(*values) -> str:
    """A short name for the folder a dataset config is prepared in before :func:`publish_prepared`."""
    return hashlib.sha256(repr(values).encode()).hexdigest()[:16]


def published_checksums(dataset_cfg: dict) -> dict[str, str]:
    """{filename: "md5:..." or "sha256:..."} of the files a downloaded dataset is fetched as (none for
    a local copy, the synthetic generator, or files published without a checksum).

    The manifest records these at preparation: a source whose published checksum changes (a new
    release in the source table, ``EHI_SOURCE_OVERRIDES`` naming another version) while the old
    archive is still cached changes no file, and :func:`changed_checksums` names it instead."""
    from ehi.data.download import overridden
    from ehi.data.sources import find_source

    source = None if dataset_cfg.get("path") else find_source(str(dataset_cfg.get("source")))
    if source is None or not source.remotes:
        return {}
    return {r.filename: f"md5:{r.md5}" if r.md5 else f"sha256:{r.sha256}"
            for r in overridden(source.name, source.remotes) if r.md5 or r.sha256}


def changed_checksums(manifest: dict) -> list[str]:
    """What differs between the checksums ``manifest`` recorded and those published now."""
    recorded = manifest.get("source_checksums")
    if not isinstance(recorded, dict) or not recorded:
        return []  # a local copy, or a manifest written before checksums were recorded
    now = published_checksums(manifest["config"])
    return [f"source archive {name}: published now as {now.get(name, 'no checksum')}, prepared from {was}"
            for name, was in sorted(recorded.items()) if now.get(name) != was]


def publish_prepared(staged: str | os.PathLike, data_dir: str | os.PathLike) -> None:
    """Move a dataset prepared in ``staged`` into ``data_dir``: the tables, then the manifest. A
    rename keeps the modification times the manifest records; a kill between two renames leaves
    tables the manifest does not describe, which :func:`check_manifest` refuses by name."""
    staged, data_dir = Path(staged), Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    for name in TABLES:
        os.replace(staged / name, data_dir / name)
    manifest = read_json_object(staged / MANIFEST, DataError)
    for name, record in manifest["tables"].items():  # a rename moves a file's ctime: the one it has now
        record["ctime_ns"] = (data_dir / name).stat().st_ctime_ns
    write_json(manifest, staged / MANIFEST)
    os.replace(staged / MANIFEST, data_dir / MANIFEST)


def _changed(path: Path, record: dict) -> str | None:
    """Why ``path`` no longer matches its record, or None."""
    if not path.exists():
        return "missing"
    st = path.stat()
    if (st.st_size, st.st_mtime_ns, st.st_ctime_ns) == (record["bytes"], record["mtime_ns"], record.get("ctime_ns")):
        return None  # untouched: skip the hash (a record without a ctime is always hashed)
    digest = file_sha256(path)
    return None if digest == record["sha256"] else f"sha256 {digest[:12]}..., manifest says {record['sha256'][:12]}..."


RECORD_KEYS = {"sha256": str, "bytes": int, "mtime_ns": int}  # a file record, as file_record writes it (ctime_ns aside)


def _check_structure(manifest: dict, path: Path) -> None:
    """A manifest not laid out as ``build_manifest`` writes it (edited, truncated, another tool's)
    is refused naming the file and the first entry that is wrong; deleting it prepares again."""
    def refuse(what: str):
        raise DataError(f"{path}: {what}, not a manifest prepare_data wrote; delete {path} so that the "
                        "next run prepares the dataset again")

    for key in ("source_files", "tables"):
        records = manifest.get(key)
        if not isinstance(records, dict):
            refuse(f"{key!r} is {'missing' if records is None else 'a ' + type(records).__name__}, not a mapping of file records")
        for name, record in records.items():
            if not isinstance(record, dict):
                refuse(f"{key}[{name!r}] is a {type(record).__name__}, not a file record")
            for field, kind in RECORD_KEYS.items():
                if not isinstance(record.get(field), kind) or isinstance(record.get(field), bool):
                    refuse(f"{key}[{name!r}].{field} is {'missing' if field not in record else repr(record[field])[:40]}")
    counts = manifest.get("queries_per_split")
    if not isinstance(counts, dict) or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0
                                               for n in counts.values()):
        refuse("'queries_per_split' is not a mapping of split to a count of queries")
    if not isinstance(manifest.get("config"), dict):
        refuse("'config' is not the mapping of the dataset config")
    if set(manifest["tables"]) != set(TABLES):
        refuse(f"'tables' lists {sorted(manifest['tables'])}, not the prepared tables {list(TABLES)}")


def check_manifest(data_dir: str | os.PathLike) -> dict | None:
    """Raise :class:`DataError` naming each source file or prepared table that changed since
    ``prepare_data`` wrote the manifest; return the manifest (None when there is none yet)."""
    path = Path(data_dir) / MANIFEST
    if not path.exists():
        return None
    manifest = read_json_object(path, DataError)
    _check_structure(manifest, path)
    problems = []
    for name, record in manifest["source_files"].items():
        if (why := _changed(Path(name), record)) is not None:
            problems.append(f"source file {name}: {why}")
    for name, record in manifest["tables"].items():
        if (why := _changed(Path(data_dir) / name, record)) is not None:
            problems.append(f"prepared table {Path(data_dir) / name}: {why}")
    problems += changed_checksums(manifest)
    if problems:
        raise DataError(
            f"dataset {manifest.get('dataset')!r} changed since it was prepared ({path}): " + "; ".join(problems)
            + f". Results would mix two versions of the data: restore the original files, or delete {path} "
            "so that the next run prepares the dataset again (and reruns everything after it).")
    return manifest
