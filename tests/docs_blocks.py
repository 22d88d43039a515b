"""The fenced code blocks of README.md and docs/*.md, with the marker comment above each.

A block a reader runs is marked, on the line right above its fence, either
``<!-- example: NAME -->`` (tests/test_docs_examples.py runs it verbatim in a folder that its
fixture NAME prepares) or ``<!-- not run: REASON -->`` (it needs what a test cannot have: the
network, a cluster, a real collection). A block of snakemake commands only needs no marker:
tests/test_docs_paths.py checks every snakemake command's targets and config files.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RUNNABLE = ("python", "bash")  # the fence languages of what a reader runs
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
MARKER = re.compile(r"<!--\s*(example|not run):\s*(.+?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    path: str  # relative to the repository
    line: int  # of the opening fence
    language: str
    code: str
    marker: tuple[str, str] | None  # ("example", fixture) or ("not run", reason)

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


def doc_files() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def blocks() -> list[Block]:
    found = []
    for path in doc_files():
        text = path.read_text()
        for fence in FENCE.finditer(text):
            before = text[: fence.start()].rstrip("\n").rsplit("\n", 1)[-1]
            marker = MARKER.search(before)
            found.append(Block(str(path.relative_to(REPO)), text.count("\n", 0, fence.start()) + 1,
                               fence.group(1), fence.group(2), marker.groups() if marker else None))
    return found


def command_lines(code: str) -> list[str]:
    """The shell commands of a block: continuation lines joined, comments dropped."""
    joined = re.sub(r"\\\n\s*", " ", code)
    return [line for line in (shlex.split(raw, comments=True) for raw in joined.splitlines()) if line]


def is_snakemake(words: list[str]) -> bool:
    """A snakemake command line (tests/test_docs_paths.py checks its targets and config files)."""
    return bool(words) and Path(words[0]).name == "snakemake"
