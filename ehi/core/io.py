"""Atomic, schema-checked Parquet and file writes with provenance.

Nothing the project writes is ever half-written: every writer goes to a temporary file in the
target's directory and renames it into place (``os.replace`` is atomic on POSIX), so a killed job
leaves either the old file or none, never a truncated one that a later rule would read as complete.
A process stopped by SIGTERM removes its temporary files as well when it has called
:func:`exit_on_termination` (SIGINT does so already: it raises ``KeyboardInterrupt``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import tempfile
from pathlib import Path
from typing import Iterator, Mapping

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ehi.core.errors import DataError, one_line
from ehi.core.provenance import PROVENANCE_KEY, identity, provenance
from ehi.core.schemas import KEYED, OPTIONAL, schema


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def exit_on_termination() -> None:
    """Have SIGTERM raise ``SystemExit(143)`` in the main thread, as SIGINT raises ``KeyboardInterrupt``:
    the ``finally`` blocks of :func:`atomic_path` and :func:`atomic_dir` then remove their temporary
    file or folder, where SIGTERM's default ends the process on the spot and leaves them beside the
    target. The exit status is a shell's for a process killed by SIGTERM (128 + 15)."""
    def _exit(signum, _frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, _exit)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; rename it onto ``path`` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        # mkstemp makes 0600 files; give the result the permissions a plain open() would.
        if tmp_path.is_file():
            os.chmod(tmp_path, 0o666 & ~_umask())
        os.replace(tmp_path, path)
    finally:
        tmp_path.unlink(missing_ok=True)


def _open_permissions(root: Path) -> None:
    """Give ``root`` and everything under it the permissions mkdir and open() would: mkdtemp makes
    0700 directories and safetensors 0600 files, which a colleague on a shared cluster cannot read."""
    umask = _umask()
    os.chmod(root, 0o777 & ~umask)
    for folder, dirs, files in os.walk(root):
        for name in dirs:
            os.chmod(os.path.join(folder, name), 0o777 & ~umask)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o666 & ~umask)


def recover_aside(path: str | os.PathLike) -> Path:
    """Put back a folder a killed :func:`replace_dir` left aside (``.<name>.old``) while ``path`` is
    missing; return the aside name."""
    path = Path(path)
    old = path.parent / f".{path.name}.old"
    if old.is_dir() and not path.exists():
        os.replace(old, path)
    return old


def replace_dir(new: str | os.PathLike, path: str | os.PathLike) -> None:
    """Move the finished folder ``new`` onto ``path``: the old folder is moved aside (``.<name>.old``)
    first and deleted last, so a kill leaves the old or the new folder under one of those names."""
    path = Path(path)
    old = recover_aside(path)
    shutil.rmtree(old, ignore_errors=True)
    if path.exists():
        os.replace(path, old)
    os.replace(new, path)
    shutil.rmtree(old, ignore_errors=True)


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary directory; on success it replaces ``path`` as a whole (:func:`replace_dir`);
    a folder a killed write left aside is put back first, so that a failing write keeps it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    recover_aside(path)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    try:
        yield tmp
        _open_permissions(tmp)
        replace_dir(tmp, path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@contextlib.contextmanager
def staged_files(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary directory inside directory ``path``; only if the block succeeds is each file
    written there moved onto its namesake in ``path`` (a set of files replaced together, in a folder
    that holds other files too: every file of a report, or none)."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".staged.", suffix=".tmp", dir=path))
    try:
        yield tmp
        for f in sorted(tmp.iterdir()):
            os.replace(f, path / f.name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def cast_table(df: pd.DataFrame, kind: str, keep_extra: bool = False) -> pa.Table:
    """Cast ``df`` to the schema of ``kind``, naming the missing or unconvertible column on failure.

    With ``keep_extra`` the columns beyond the schema follow it, with their inferred types.
    """
    target = schema(kind)
    df = with_optional_columns(df, kind)
    # an optional column nothing filled is left out, so a table without it is the file it always was
    target = pa.schema([f for f in target if f.name not in OPTIONAL.get(kind, ()) or df[f.name].notna().any()])
    missing = [name for name in target.names if name not in df.columns]
    if missing:
        raise ValueError(f"{kind} table lacks column(s) {missing}; expected {target.names}")
    columns = []
    for field in target:
        values = df[field.name]
        if pa.types.is_string(field.type):
            # ids may arrive as integers (e.g. MS MARCO pids); the contract stores them as strings
            values = values.astype("string").to_numpy(dtype=object, na_value=None)
        else:
            values = values.to_numpy()
        try:
            columns.append(pa.array(values, type=field.type, from_pandas=True))
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as err:
            raise ValueError(f"{kind} table: column {field.name!r} cannot be cast to {field.type}: {err}") from err
    table = pa.Table.from_arrays(columns, schema=target)
    for name in [c for c in df.columns if c not in target.names] if keep_extra else []:
        table = table.append_column(str(name), pa.array(df[name].to_numpy(), from_pandas=True))
    return table


def write_table(
    df: pd.DataFrame, kind: str, path: str | os.PathLike, meta: Mapping | None = None, keep_extra: bool = False
) -> Path:
    """Write ``df`` as a Parquet table of ``kind`` atomically, with provenance in its metadata."""
    return write_parquet(cast_table(df, kind, keep_extra), path, {"kind": kind, **(meta or {})})


def write_parquet(table: pa.Table, path: str | os.PathLike, meta: Mapping | None = None) -> Path:
    """Write an Arrow table atomically with provenance (plus ``meta``) in its metadata.

    For tables without a fixed schema (e.g. a training log); contract tables use :func:`write_table`.
    """
    info = provenance(**(meta or {}))
    return replace_parquet(table.replace_schema_metadata({PROVENANCE_KEY: json.dumps(info, sort_keys=True, default=str).encode()}),
                           path)


def replace_parquet(table: pa.Table, path: str | os.PathLike) -> Path:
    """Write ``table`` (its metadata the provenance) to ``path`` atomically, unless the file there
    holds the same values and the same provenance but its circumstances
    (:data:`ehi.core.provenance.CIRCUMSTANCES`): then its bytes are
    kept and only its modification time moves (Snakemake sees a fresh output, git no change)."""
    path = Path(path)
    if _same_values(table, path):
        os.utime(path)
        return path
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)
    return path


def _same_values(table: pa.Table, path: Path) -> bool:
    if not path.is_file():
        return False
    try:
        old = (pq.read_schema(path).metadata or {}).get(PROVENANCE_KEY)
        new = (table.schema.metadata or {}).get(PROVENANCE_KEY)
        if old is None or new is None or identity(old) != identity(new):
            return False
    except (pa.ArrowException, OSError, ValueError):  # unreadable or no provenance: rewritten
        return False
    again = pa.BufferOutputStream()  # the values written with the file's own provenance: its bytes if unchanged
    pq.write_table(table.replace_schema_metadata({**table.schema.metadata, PROVENANCE_KEY: old}), again)
    return again.getvalue().to_pybytes() == path.read_bytes()


@contextlib.contextmanager
def _readable_parquet(path) -> Iterator[None]:
    """A file that is there but no readable Parquet (garbage, truncated) as one DataError naming it."""
    try:
        yield
    except FileNotFoundError:
        raise
    except (pa.ArrowException, OSError) as err:
        raise DataError(f"{path}: not a readable Parquet file ({one_line(err)}); regenerate it, or restore "
                        "it from git if it is a committed result") from None


def read_table(path: str | os.PathLike, kind: str | None = None) -> pd.DataFrame:
    """Read a Parquet table; with ``kind``, check it carries that schema's columns. A file that is no
    readable Parquet (garbage, truncated) or lacks the columns is a DataError naming it."""
    with _readable_parquet(path):
        df = pq.read_table(path).to_pandas()
    if kind is not None:
        df = with_optional_columns(df, kind)
        missing = [c for c in schema(kind).names if c not in df.columns]
        if missing:
            raise DataError(f"{path}: not a {kind} table, missing column(s) {missing}")
        if kind in KEYED:
            check_keyed_rows(df, kind, path)
    return df


def check_keyed_rows(df: pd.DataFrame, kind: str, path) -> None:
    """A table of a :data:`~ehi.core.schemas.KEYED` kind: some rows, each key once, a number in
    every value (a DataError naming the file and the first offending row)."""
    keys, value = KEYED[kind]
    if df.empty:
        raise DataError(f"{path}: a {kind} table without rows")
    def named(rows: pd.DataFrame) -> str:
        return ", ".join(f"{k}={rows.iloc[0][k]}" for k in keys)

    nan = df[value].isna()
    if nan.any():
        raise DataError(f"{path}: {int(nan.sum())} NaN {value}(s), first at {named(df[nan])}")
    repeated = df.duplicated(list(keys), keep=False)
    if repeated.any():
        raise DataError(f"{path}: {int(repeated.sum())} rows repeat a key, first {named(df[repeated])}")


def with_optional_columns(df: pd.DataFrame, kind: str) -> pd.DataFrame:
    """``df`` with the optional columns of ``kind`` it lacks (:data:`ehi.core.schemas.OPTIONAL`) as nulls."""
    absent = [c for c in OPTIONAL.get(kind, ()) if c not in df.columns]
    return df.assign(**{c: float("nan") for c in absent}) if absent else df


def read_provenance(path: str | os.PathLike) -> dict:
    """The provenance dictionary stored in a Parquet file by :func:`write_table` (``{}`` if none).

    Files written before stage versions were stamped have no ``versions`` key.
    """
    with _readable_parquet(path):
        meta = pq.read_schema(path).metadata or {}
    raw = meta.get(PROVENANCE_KEY)
    return json.loads(raw) if raw else {}


def file_sha256(path: str | os.PathLike, chunk: int = 1 << 24) -> str:
    """sha256 of a file's bytes, read in chunks (large corpora and shards do not fit in memory)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def write_json(obj, path: str | os.PathLike) -> Path:
    """Write JSON atomically (sorted keys, so equal content gives equal bytes)."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")
    return Path(path)


def read_json_object(path: str | os.PathLike, error: type[Exception] = ValueError) -> dict:
    """A JSON file that must hold an object; a missing, unreadable or malformed file, or another
    JSON value (a list, a number), raises ``error`` naming the file."""
    path = Path(path)
    try:
        value = json.loads(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        raise error(f"{path}: file missing") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise error(f"{path}: not a readable JSON file ({err})") from None
    if not isinstance(value, dict):
        raise error(f"{path}: expected a JSON object, got {type(value).__name__}")
    return value
