"""LaTeX tables that compile, and a check that a ``.tex`` table parses.

pandas' ``to_latex`` leaves cells, headers and captions as they are unless asked, and our headers
and names carry LaTeX's specials (``1%`` starts a comment, ``de_scann`` a subscript outside math
mode), so everything is escaped here. The check parses the file with pylatexenc (strictly: an
unbalanced brace or environment fails) and looks for what parses yet breaks a table: a comment
(an unescaped ``%``), a ``_`` or ``^`` outside math mode, and rows whose cell count is not the
column specification's. The tables need ``\\usepackage{booktabs}``.
"""

from __future__ import annotations

import re

import pandas as pd

_SPECIALS = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
             "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
_SPECIAL_RE = re.compile("|".join(re.escape(c) for c in _SPECIALS))
MISSING = "--"  # an en dash in LaTeX, where nothing was measured


def escape(text: str) -> str:
    """``text`` with every LaTeX special character escaped."""
    return _SPECIAL_RE.sub(lambda m: _SPECIALS[m.group()], str(text))


def table_tex(df: pd.DataFrame, caption: str = "", floatfmt: str = ".4f") -> str:
    """``df`` as a booktabs ``table`` environment, every header, cell and the caption escaped."""
    return df.to_latex(index=False, escape=True, na_rep=MISSING, float_format=lambda x: format(x, floatfmt),
                       caption=escape(caption) if caption else None)


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
        elif isinstance(node, lw.LatexMathNode):
            _walk(node.nodelist, True, problems, text)
        elif isinstance(node, lw.LatexEnvironmentNode):
            if node.environmentname == "tabular":
                _check_rows(node, problems, text)
            args = [a for a in (node.nodeargd.argnlist if node.nodeargd else []) if a is not None]
            _walk([*args, *node.nodelist], in_math, problems, text)
        elif isinstance(node, (lw.LatexGroupNode,)):
            _walk(node.nodelist, in_math, problems, text)
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
