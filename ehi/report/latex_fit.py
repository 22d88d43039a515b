"""How wide a LaTeX table sets, under a fixed font model, and how to make one fit the page.

The model: Computer Modern Roman at 10 pt (the advance widths of cmr10's TFM, in pt; characters
it does not list count as a digit, math symbols such as ± and ≤ as a plus sign), times the size
command's factor, plus 2 ``\\tabcolsep`` a column. A size command switches to a font drawn for
that size (cmr9, cmr8, cmr7), relatively wider than cmr10 scaled down: each factor is the size's
ratio to 10 pt times the largest ratio, over the characters listed, of that font's TFM width to
cmr10's scaled (so the model never sets a table narrower than TeX does; the TeX test,
tests/report/test_latex_tex.py, compiles every committed table and checks these factors against
the installed fonts). The page: the article class's single column at 10 pt, ``\\textwidth`` =
345 pt, ``\\textheight`` = 550 pt; a table of more than :data:`LONG_ROWS` body rows, or one whose
estimated height (:func:`float_height`) is over the page, is set as a ``longtable``. :func:`layout` picks, in this order, the largest size
and separation at which the table fits; else wraps its text columns (``p{..}``); else splits its
columns into parts that each fit, repeating the leading text columns in each.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

TEXTWIDTH = 345.0  # pt
TEXTHEIGHT = 550.0  # pt
LONG_ROWS = 40
# (size command, width factor against cmr10, design size in pt, \baselineskip in pt)
FONTS = (("", 1.0, 10, 12.0), (r"\small", 0.9 * 1.0287, 9, 11.0), (r"\footnotesize", 0.8 * 1.0626, 8, 9.5),
         (r"\scriptsize", 0.7 * 1.1643, 7, 8.0))
SIZES = tuple((size, factor) for size, factor, _, _ in FONTS)
BASELINE = {size: skip for size, _, _, skip in FONTS}
SEPS = (6.0, 4.0)  # \tabcolsep, pt
MIN_WRAP = 60.0  # pt: a wrapped column no narrower than this
RULES = 12.0  # pt: booktabs' three rules and the space around them (0.08em + 0.05em + 0.08em, 2 x 1.05ex)
CAPTION_SKIP = 10.0  # pt: \abovecaptionskip
PART_SKIP = 6.0  # pt: the \medskip between two parts

_CMR10 = {
    **dict(zip("abcdefghijklmnopqrstuvwxyz", (5.0, 5.56, 4.44, 5.56, 4.44, 3.06, 5.0, 5.56, 2.78, 3.06, 5.28, 2.78,
                                              8.33, 5.56, 5.0, 5.56, 5.28, 3.92, 3.94, 3.89, 5.56, 5.28, 7.22, 5.28,
                                              5.28, 4.44))),
    **dict(zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ", (7.5, 7.08, 7.22, 7.64, 6.81, 6.53, 7.85, 7.5, 3.61, 5.14, 7.78, 6.25,
                                              9.17, 7.5, 7.78, 6.81, 7.78, 7.36, 5.56, 7.22, 7.5, 7.5, 10.28, 7.5,
                                              7.5, 6.11))),
    **{c: 2.78 for c in ".,:;!'|[]"}, **{c: 3.89 for c in "()"}, " ": 3.33, "-": 3.33, "?": 4.72,
    **{c: 7.78 for c in "+=<>@&±≤≥×"}, **{c: 8.33 for c in "%#"}, "–": 5.0, "—": 10.0,
}
DIGIT = 5.0


def text_width(text: str, scale: float = 1.0) -> float:
    """Width in pt of ``text`` (as printed, unescaped) at ``scale`` of 10 pt."""
    return scale * sum(_CMR10.get(c, DIGIT) for c in str(text))


@dataclass(frozen=True)
class Layout:
    size: str  # "" or a size command
    sep: float  # \tabcolsep
    parts: tuple[tuple[int, ...], ...]  # column indices of each part
    wrap: dict  # column index -> p{} width in pt

    def spec(self, part: tuple[int, ...], numeric: list[bool]) -> str:
        return "".join(f"p{{{self.wrap[j]:.0f}pt}}" if j in self.wrap else ("r" if numeric[j] else "l") for j in part)


def words(text: str) -> list[str]:
    """Where a wrapped cell may break: at spaces, and after each / of a variant path."""
    return [w for w in re.split(r"\s+|(?<=/)", str(text)) if w] or [""]


def _width(widths: list[float], scale: float, sep: float) -> float:
    return scale * sum(widths) + 2 * sep * len(widths)


def _wrapped(part, widths, longest, numeric, scale, sep) -> dict | None:
    """p{} widths (whole points) for the text columns of ``part`` so that it fits, or None: the
    room left by the other columns shared out, each column given at least its longest word and at
    most its natural width, the columns with the longest words first."""
    text_cols = sorted((j for j in part if not numeric[j] and scale * widths[j] > MIN_WRAP),
                       key=lambda j: -longest[j])
    room = TEXTWIDTH - sum(scale * widths[j] for j in part if j not in text_cols) - 2 * sep * len(part)
    out = {}
    for i, j in enumerate(text_cols):
        share = math.floor(room / (len(text_cols) - i))
        out[j] = max(math.ceil(scale * longest[j]), min(share, math.ceil(scale * widths[j])))
        room -= out[j]
    return out if text_cols and room >= 0 else None


def layout(widths: list[float], longest: list[float], numeric: list[bool]) -> Layout:
    """The layout of a table whose columns are ``widths`` wide at 10 pt (``longest``: each
    column's longest unbreakable word, ``numeric``: right-aligned number columns)."""
    every = tuple(range(len(widths)))
    for wrap in (False, True):
        for size, scale in SIZES:
            for sep in SEPS:
                if not wrap and _width(widths, scale, sep) <= TEXTWIDTH:
                    return Layout(size, sep, (every,), {})
                if wrap and (fits := _wrapped(every, widths, longest, numeric, scale, sep)) is not None:
                    return Layout(size, sep, (every,), fits)
    (size, scale), sep = SIZES[-1], SEPS[-1]
    keys = []
    for j in every:  # the leading text columns name each row: repeated in every part
        if numeric[j] or len(keys) == 2:
            break
        keys.append(j)
    # a text column counts as wrapped to MIN_WRAP (or its longest word) when parts are cut
    least = [w if numeric[j] else min(w, max(longest[j], MIN_WRAP / scale)) for j, w in enumerate(widths)]
    parts, part = [], list(keys)
    for j in every[len(keys):]:
        if len(part) > len(keys) and _width([least[i] for i in part + [j]], scale, sep) > TEXTWIDTH:
            parts.append(tuple(part))
            part = list(keys)
        part.append(j)
    parts.append(tuple(part))
    wrap: dict = {}  # a key column is in every part: the narrowest part's share
    for part in parts:
        if _width([widths[j] for j in part], scale, sep) > TEXTWIDTH:
            for j, share in (_wrapped(part, widths, longest, numeric, scale, sep) or {}).items():
                wrap[j] = min(share, wrap.get(j, share))
    return Layout(size, sep, tuple(parts), wrap)


def _lines(text: str, width: float, scale: float) -> int:
    """Lines a ``p{width}`` cell of ``text`` fills: its words set greedily, a space between two."""
    lines, used, space = 1, 0.0, scale * _CMR10[" "]
    for word in words(text):
        wide = text_width(word, scale)
        if used and used + space + wide > width:
            lines, used = lines + 1, wide
        else:
            used += (space if used else 0.0) + wide
    return lines


def float_height(text: str, rows: list[list[str]], fit: Layout) -> float:
    """Estimated height in pt of a floating table: ``text`` (its caption and note, set across the
    text width) above, then each part of ``fit``: ``rows`` (the header, then the body; a row as
    tall as its tallest wrapped cell) between three rules."""
    scale, skip = dict(SIZES)[fit.size], BASELINE[fit.size]
    height = CAPTION_SKIP + skip * math.ceil(text_width(text, scale) / TEXTWIDTH)
    for part in fit.parts:
        lines = sum(max([_lines(row[j], fit.wrap[j], scale) for j in part if j in fit.wrap], default=1)
                    for row in rows)
        height += skip * lines + RULES + PART_SKIP
    return height


_ROW_END = re.compile(r"\\\\\s*$")
_UNESCAPE = [(r"\textbackslash{}", "\\"), (r"\textless{}", "<"), (r"\textgreater{}", ">"), (r"\textbar{}", "|"),
             (r"$\leq$", "≤"), (r"$\geq$", "≥"), (r"\textasciitilde{}", "~"), (r"\textasciicircum{}", "^"),
             (r"\&", "&"), (r"\%", "%"), (r"\$", "$"), (r"\#", "#"), (r"\_", "_"), (r"\{", "{"), (r"\}", "}")]


def _printed(cell: str) -> str:
    for tex, char in _UNESCAPE:
        cell = cell.replace(tex, char)
    cell = cell.replace(r"\allowbreak{}", "")
    return cell.strip()


_SIZE_RE = re.compile("|".join(re.escape(s) for s, _ in SIZES[1:]) + r"(?![a-z])")
_SEP_RE = re.compile(r"\\setlength\{\\tabcolsep\}\{([\d.]+)pt\}")
_TABLE_START = re.compile(r"\\begin\{table\}|\\begingroup")


def _settings(preamble: str) -> tuple[float, float]:
    """The scale and ``\\tabcolsep`` the last size command and setlength of ``preamble`` set."""
    sizes, seps = _SIZE_RE.findall(preamble), _SEP_RE.findall(preamble)
    return dict(SIZES).get(sizes[-1] if sizes else "", 1.0), float(seps[-1]) if seps else 6.0


def tex_widths(text: str) -> list[float]:
    """The width in pt of every tabular and longtable in ``text`` (a file table_tex wrote), each
    under its own table's size command and ``\\tabcolsep`` (a file of several tables sets each
    its own): a ``p{..pt}`` column at its width (or its longest word, if wider), every other
    column at its widest cell."""
    out = []
    for env in re.finditer(r"\\begin\{(tabular|longtable)\}(?:\[\w\])?\{((?:[^{}]|\{[^{}]*\})*)\}(.*?)\\end\{\1\}",
                           text, re.S):
        starts = [m.start() for m in _TABLE_START.finditer(text, 0, env.start())]
        scale, sep = _settings(text[starts[-1] if starts else 0: env.start()])
        specs = re.findall(r"p\{([\d.]+)pt\}|[lcr]", env.group(2))
        widths = [float(p) if p else 0.0 for p in specs]
        for line in env.group(3).splitlines():
            if not _ROW_END.search(line) or line.lstrip().startswith(("\\caption", "\\toprule", "\\midrule")):
                continue
            cells = [_printed(c) for c in _ROW_END.sub("", line).split(" & ")]
            for j, cell in enumerate(cells[: len(widths)]):
                if specs[j]:  # p{}: its width, unless one word is wider
                    widths[j] = max(widths[j], *(text_width(w, scale) for w in words(cell)))
                else:
                    widths[j] = max(widths[j], text_width(cell, scale))
        out.append(sum(widths) + 2 * sep * len(widths))
    return out
