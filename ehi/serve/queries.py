"""Query files for ``ehi search``, checked whole before the first result is printed.

A file (or stdin) is decoded line by line once before any query is searched, so a bad byte on line
90,000 stops the command with the line named and nothing printed, instead of after the header and
every finished batch. Stdin is spooled to a temporary file for that check; memory stays flat
however long the input (a file is read twice, a pipe once and then from the spool).
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import BinaryIO, Callable, Iterable, Iterator

import numpy as np

from ehi.core.errors import DataError


LineCheck = Callable[[int, str], object]  # (line number, line): raises a DataError for a bad line


def numbered_queries(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    """(1-based line number, line without its line break) for every non-blank line; the caller
    strips it (a trailing tab can matter: ``qid<TAB>`` with no text)."""
    for no, line in enumerate(lines, 1):
        if line.strip():
            yield no, line.rstrip("\r\n")


def check_query_lines(binary: BinaryIO, name: str, check_line: LineCheck | None = None) -> int:
    """The number of queries in ``binary``; a line that is not UTF-8 (or that ``check_line``
    refuses), or no query at all, is a :class:`DataError` naming ``name`` (and the line)."""
    n = 0
    for lineno, raw in enumerate(binary, 1):
        try:
            line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
        except UnicodeDecodeError as err:
            raise DataError(f"{name}, line {lineno}: not UTF-8 ({err.reason} at byte {err.start})") from None
        if line.strip() and check_line is not None:
            check_line(lineno, line.rstrip("\r\n"))
        n += bool(line.strip())
    if n == 0:
        raise DataError(f"{name}: no queries (every line is blank)")
    return n


def _spool_stdin(spool: BinaryIO) -> None:
    source = getattr(sys.stdin, "buffer", None)
    if source is not None:
        shutil.copyfileobj(source, spool)
    else:  # a text stream without bytes underneath (e.g. one a caller put in place of stdin)
        for line in sys.stdin:
            spool.write(line.encode("utf-8", "surrogateescape"))


@contextlib.contextmanager
def checked_queries(source: str, check_line: LineCheck | None = None) -> Iterator[Iterator[tuple[int, str]]]:
    """(line number, line) of the file ``source`` (``-``: stdin), every line checked first (UTF-8,
    and ``check_line`` when given)."""
    with contextlib.ExitStack() as stack:
        if source == "-":
            binary = stack.enter_context(tempfile.TemporaryFile())
            _spool_stdin(binary)
            binary.seek(0)
            name = "stdin"
        else:
            binary = stack.enter_context(open(source, "rb"))
            name = source
        check_query_lines(binary, name, check_line)
        binary.seek(0)
        yield numbered_queries(io.TextIOWrapper(binary, encoding="utf-8-sig"))


def vector_queries(path: str | os.PathLike) -> tuple[list[str], np.ndarray]:
    """The query ids and the (memory-mapped, checked: 2-D, float, finite) rows of a query-vectors
    file (``ehi search --query-vectors``): the ids of ``query_ids.txt`` beside it where it has a
    line a row (a vectors dataset's layout), else the row numbers from 0."""
    from ehi.data.embeddings import read_array

    path = Path(path)
    array = read_array(path)
    ids_file = path.with_name("query_ids.txt")
    ids = ids_file.read_text(encoding="utf-8").splitlines() if ids_file.is_file() else []
    return (ids if len(ids) == len(array) else [str(row) for row in range(len(array))]), array
