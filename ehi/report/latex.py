"""LaTeX tables that compile, and a check that a ``.tex`` table parses.

pandas' ``to_latex`` leaves cells, headers and captions as they are unless asked, and our headers
and names carry LaTeX's specials (``1%`` starts a comment, ``de_scann`` a subscript outside math
mode), so everything is escaped here. The check parses the file with pylatexenc (strictly: an
unbalanced brace or environment fails) and looks for what parses yet breaks a table: a comment
(an unescaped ``%``), a ``_`` or ``^`` outside math mode, a ``<``, ``>`` or ``|`` outside it
(LaTeX's default text encoding prints ¡ ¿ —), and rows whose cell count is not the
column specification's. The tables need ``\\usepackage{booktabs,longtable}``.
"""

from __future__ import annotations

import math
import re

import pandas as pd

from ehi.report.latex_fit import LONG_ROWS, TEXTHEIGHT, float_height, layout, text_width, words

# OT1, LaTeX's default text encoding, prints < > | as ¡ ¿ —, and utf8 input has no ≤ ≥ in text
_SPECIALS = {"<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}", "≤": r"$\leq$", "≥": r"$\geq$",
             "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
             "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
_SPECIAL_RE = re.compile("|".join(re.escape(c) for c in _SPECIALS))
MISSING = "--"  # an en dash in LaTeX, where nothing was measured


def escape(text: str) -> str:
    """``text`` with every LaTeX special character escaped."""
    return _SPECIAL_RE.sub(lambda m: _SPECIALS[m.group()], str(text))


def _cells(df: pd.DataFrame, floatfmt: str) -> list[list[str]]:
    def cell(value) -> str:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return MISSING
        return format(value, floatfmt) if isinstance(value, float) else str(value)

    return [[cell(v) for v in row] for row in df.astype(object).itertuples(index=False)]


def _rows(cells: list[list[str]], part: tuple[int, ...], wrap: dict) -> list[str]:
    def cell(row, j: int) -> str:  # a wrapped column may break after the / of a variant path
        return escape(row[j]).replace("/", r"/\allowbreak{}") if j in wrap else escape(row[j])

    return [" & ".join(cell(row, j) for j in part) + r" \\" for row in cells]


def table_tex(df: pd.DataFrame, caption: str = "", floatfmt: str = ".4f", label: str = "", note: str = "") -> str:
    """``df`` as a booktabs table that fits ``\\textwidth`` (:mod:`ehi.report.latex_fit`): centred,
    with its caption and ``\\label``, every header, cell and the caption escaped, ``note`` a
    paragraph under it (or in its place, when ``df`` has no rows); a ``longtable`` when it is taller than a page, its columns in parts when no
    size fits them side by side."""
    if df.empty:  # no tabular at all: one with no rows or no columns is an empty box, or does not compile
        tag = r"\label{" + label + "}" if label else ""
        return "\n".join([r"\begin{table}[htbp]", r"\centering", r"\caption{" + escape(caption) + "}" + tag,
                          escape(note or "No rows."), r"\end{table}"]) + "\n"
    header = [str(c) for c in df.columns]
    cells = _cells(df, floatfmt)
    numeric = [pd.api.types.is_numeric_dtype(df[c]) for c in df.columns]
    columns = list(zip(header, *cells)) if cells else [(h,) for h in header]
    fit = layout([max(text_width(c) for c in col) for col in columns],
                 [max(text_width(w) for c in col for w in words(c)) for col in columns], numeric)
    setup = [line for line in (fit.size, rf"\setlength{{\tabcolsep}}{{{fit.sep:g}pt}}") if line]
    long = len(cells) > LONG_ROWS or float_height(f"{caption} {note}", [header, *cells], fit) > TEXTHEIGHT
    lines = [r"\begingroup" if long else r"\begin{table}[htbp]", *([] if long else [r"\centering"]), *setup]
    for i, part in enumerate(fit.parts):
        head = [" & ".join(escape(header[j]) for j in part) + r" \\"]
        of = f" (columns, part {i + 1} of {len(fit.parts)})" if len(fit.parts) > 1 else ""
        title = r"\caption{" + escape(caption + of) + "}" if caption or of else ""
        tag = r"\label{" + label + (f"-{i + 1}" if i else "") + "}" if label else ""
        if long:
            lines += [r"\begin{longtable}{" + fit.spec(part, numeric) + "}", title + tag + r"\\" if title or tag
                      else "", r"\toprule", *head, r"\midrule", r"\endfirsthead", r"\toprule", *head, r"\midrule",
                      r"\endhead", r"\bottomrule", r"\endlastfoot", *_rows(cells, part, fit.wrap), r"\end{longtable}"]
        else:
            lines += [*([title] if title and i == 0 else []), *([tag] if tag and i == 0 else []),
                      *([r"\par\medskip"] if i else []), r"\begin{tabular}{" + fit.spec(part, numeric) + "}",
                      r"\toprule", *head, r"\midrule", *_rows(cells, part, fit.wrap), r"\bottomrule", r"\end{tabular}"]
    if note:  # under the table, in words: a caption says what the table is, not what went wrong
        # a longtable's note is a page paragraph, justified unless told: ragged, as a float's centred
        # note is, so that variant paths (few break points) cannot overrun the line
        lines += [r"\par\smallskip", *([r"\raggedright"] if long else []), escape(note)]
    lines.append(r"\endgroup" if long else r"\end{table}")
    return "\n".join(line for line in lines if line) + "\n"


def _columns(spec: str) -> int:
    """Columns of a tabular specification such as ``{llrr}`` or ``{lp{3cm}}``."""
    inner = spec.strip()[1:-1]
    return len(re.findall(r"[lcrpmbX]", re.sub(r"\{[^}]*\}", "", inner)))


def _walk(nodes, in_math: bool, problems: list[str], text: str) -> None:
    from pylatexenc import latexwalker as lw

    for node in nodes or []:
        if node is None:
            continue
        line = text.count("\n", 0, node.pos) + 1
        if isinstance(node, lw.LatexCommentNode):
            problems.append(f"line {line}: an unescaped % turns the rest of the line into a comment")
        elif isinstance(node, lw.LatexCharsNode) and not in_math and re.search(r"[_^]", node.chars):
            problems.append(f"line {line}: _ or ^ outside math mode in {node.chars.strip()!r}")
        elif isinstance(node, lw.LatexCharsNode) and not in_math and re.search(r"[<>|]", node.chars):
            problems.append(f"line {line}: < > or | outside math mode prints as ¡ ¿ or — in {node.chars.strip()!r}")
        elif isinstance(node, lw.LatexMathNode):
            _walk(node.nodelist, True, problems, text)
        elif isinstance(node, lw.LatexEnvironmentNode):
            if node.environmentname == "tabular":
                _check_rows(node, problems, text)
            args = [a for a in (node.nodeargd.argnlist if node.nodeargd else []) if a is not None]
            _walk([*args, *node.nodelist], in_math, problems, text)
        elif isinstance(node, (lw.LatexGroupNode,)):
            _walk(node.nodelist, in_math, problems, text)
        elif isinstance(node, lw.LatexMacroNode) and node.macroname == "label":
            continue  # a key, not text: _ is allowed there
        elif isinstance(node, lw.LatexMacroNode) and node.nodeargd:
            _walk([a for a in node.nodeargd.argnlist if a is not None], in_math, problems, text)


def _check_rows(env, problems: list[str], text: str) -> None:
    from pylatexenc import latexwalker as lw

    spec_arg = next(a for a in env.nodeargd.argnlist if a is not None)
    n_cols = _columns(spec_arg.latex_verbatim())
    row, rows = [], []
    for node in env.nodelist:
        if isinstance(node, lw.LatexMacroNode) and node.macroname == "\\":
            rows.append(row)
            row = []
        else:
            row.append(node)
    rows.append(row)
    for nodes in rows:
        cells = 1 + sum(isinstance(n, lw.LatexSpecialsNode) and n.specials_chars == "&" for n in nodes)
        content = any(isinstance(n, (lw.LatexCharsNode, lw.LatexSpecialsNode)) and n.latex_verbatim().strip()
                      for n in nodes)
        if content and cells != n_cols:
            line = text.count("\n", 0, nodes[0].pos) + 1
            problems.append(f"line {line}: {cells} cells in a row of a {n_cols}-column tabular")


def latex_problems(text: str) -> list[str]:
    """What stops ``text`` (a LaTeX table) from compiling as meant; empty when it parses cleanly."""
    from pylatexenc.latexwalker import LatexWalker, LatexWalkerError

    try:
        nodes, _, _ = LatexWalker(text, tolerant_parsing=False).get_latex_nodes()
    except LatexWalkerError as err:
        return [f"does not parse: {err}"]
    problems: list[str] = []
    _walk(nodes, False, problems, text)
    return problems
