"""What a reader met in a collection's files beyond the plain case, counted per file and logged.

Real collections come with Windows line ends, qrels with or without their header line, graded,
zero and negative relevance, and ids written as JSON numbers in one file and as text in another.
None of these is an error, and none is dropped: each is read as it is meant and counted here, so
the preparation log says what the files contained. (Documents with empty title and text and
queries without judgements are counted by :func:`ehi.data.validate.assemble`.)
"""

from __future__ import annotations

import logging
import os
from collections import Counter

log = logging.getLogger("ehi.data")

RELEVANCE = "relevance"  # counter keys (RELEVANCE, grade): judgements per relevance grade


class InputCounts:
    """Per-file counters: ``crlf_lines``, ``no_header`` (qrels whose line 1 is a judgement),
    ``numeric_ids`` (ids given as JSON numbers, read as their decimal text) and, for qrels, the
    judgements per relevance grade."""

    def __init__(self) -> None:
        self.files: dict[str, Counter] = {}

    def of(self, path: str | os.PathLike) -> Counter:
        return self.files.setdefault(str(path), Counter())

    def grades(self, path: str | os.PathLike) -> dict[int, int]:
        counts = self.of(path)
        return {key[1]: counts[key] for key in sorted(k for k in counts if isinstance(k, tuple) and k[0] == RELEVANCE)}

    def lines(self) -> list[str]:
        """One line per file with anything to report."""
        out = []
        for path, counts in self.files.items():
            parts = []
            if counts["crlf_lines"]:
                parts.append(f"{counts['crlf_lines']} line(s) with CRLF ends (read as LF)")
            if counts["no_header"]:
                parts.append("no header line (line 1 read as a judgement)")
            if counts["numeric_ids"]:
                parts.append(f"{counts['numeric_ids']} id(s) given as JSON numbers (read as their decimal text)")
            grades = self.grades(path)
            if grades:
                zero, negative = grades.get(0, 0), sum(n for g, n in grades.items() if g < 0)
                odd = f" ({zero} at 0 and {negative} negative, kept as given)" if zero or negative else ""
                parts.append(f"judgements per relevance grade {grades}{odd}")
            if parts:
                out.append(f"{path}: " + "; ".join(parts))
        return out

    def log(self, logger: logging.Logger = log) -> list[str]:
        lines = self.lines()
        for line in lines:
            logger.info(line)
        return lines


def id_text(value, counts: Counter) -> str:
    """An ``_id`` as text: a JSON number (``7``) reads as ``"7"``, as the same id does in a TSV file."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        counts["numeric_ids"] += 1
    return str(value)
