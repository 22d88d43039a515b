"""LaTeX tables fit the page: widths from the cell strings under a fixed font model (cmr10)."""

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ehi.report.latex import latex_problems, table_tex
from ehi.report.latex_fit import LONG_ROWS, TEXTWIDTH, tex_widths, text_width

REPO = Path(__file__).resolve().parents[2]
# timings are git-ignored (they change with every run): a checkout's own are not committed tables
COMMITTED = sorted(p for p in (REPO / "results").rglob("*.tex") if "_timings." not in p.name)


def _body_rows(text: str) -> int:
    """Body rows of the first tabular or longtable: after its header (\\midrule, or a longtable's
    \\endlastfoot) up to its \\bottomrule or end."""
    start = r"\\endlastfoot" if r"\endlastfoot" in text else r"\\midrule"
    body = re.search(start + r"\n(.*?)(?:\\bottomrule|\\end\{longtable\})", text, re.S)
    if body is None:  # a table with nothing to show is a sentence in its float (e.g. a config without ablations)
        return 0
    return sum(line.endswith("\\\\") for line in body.group(1).splitlines())


def test_widths_follow_cmr10():
    assert text_width("0.6526") == pytest.approx(5 * 5.0 + 2.78)  # digits 5 pt, the point 2.78 pt
    assert text_width("mm", scale=0.8) == pytest.approx(2 * 8.33 * 0.8)
    table = "\\begin{tabular}{lr}\n\\toprule\na & b \\\\\n\\midrule\nmm & 10 \\\\\n\\bottomrule\n\\end{tabular}\n"
    assert tex_widths(table) == [pytest.approx(2 * 8.33 + 2 * 5.0 + 4 * 6.0)]  # widest cells + 2 tabcolsep each


def test_each_table_of_a_file_is_measured_under_its_own_size_and_separation():
    """A cross-dataset file holds a table per metric and budget, each set at its own size: the
    second table's \\scriptsize and 4 pt must not be applied to the first, nor the first's to it."""
    wide = pd.DataFrame({"system": ["ehi+tree"], "note": ["-0.111 vs ehi+faiss-hnsw (p_adj 0.002) * " * 2]})
    narrow = pd.DataFrame({"system": ["ehi+tree"], "value": [0.5]})
    first, second = table_tex(narrow, label="tab:a"), table_tex(wide, label="tab:b")
    assert r"\scriptsize" not in first and "6pt" in first
    alone = tex_widths(first) + tex_widths(second)
    assert tex_widths(first + "\n" + second) == alone and tex_widths(second + "\n" + first) == alone[::-1]
    assert alone[0] == pytest.approx(text_width("ehi+tree") + text_width("0.5000") + 4 * 6.0)


@pytest.mark.parametrize("shape", ["wide", "long", "wordy"])
def test_a_rendered_table_fits_the_text_width(shape):
    rng = np.random.default_rng(0)
    if shape == "wide":  # 16 number columns: split into parts, the name column repeated in each
        df = pd.DataFrame(rng.random((5, 16)), columns=[f"system number {i}" for i in range(16)])
        df.insert(0, "dataset", [f"set_{i}" for i in range(5)])
    elif shape == "long":
        df = pd.DataFrame({"system": [f"s{i}" for i in range(LONG_ROWS + 10)], "value": rng.random(LONG_ROWS + 10)})
    else:  # a text column of sentences: wrapped
        df = pd.DataFrame({"claim": ["a", "b"], "text": ["EHI's tree is at least every peer at the same budget " * 3] * 2,
                           "delta": [0.1, -0.2]})
    tex = table_tex(df, caption="at <= 10% of documents", label="tab:t_1")
    assert latex_problems(tex) == []
    assert max(tex_widths(tex)) <= TEXTWIDTH
    assert r"\label{tab:t_1}" in tex and r"\caption{" in tex
    assert ("longtable" in tex) == (shape == "long") and (r"\centering" in tex) == (shape != "long")
    if shape == "wide":
        assert len(tex_widths(tex)) > 1 and tex.count("& dataset") == 0 and tex.count("dataset &") == len(tex_widths(tex))
    if shape == "wordy":
        assert re.search(r"\\begin\{tabular\}\{lp\{\d+pt\}r\}", tex)


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.name)
def test_every_committed_table_fits_the_text_width_and_carries_label_and_centering(path):
    text = path.read_text()
    assert max(tex_widths(text), default=0) <= TEXTWIDTH, (path.name, tex_widths(text))
    assert r"\label{" in text
    if _body_rows(text) > LONG_ROWS:  # shorter ones too when taller than a page (the TeX test checks)
        assert "longtable" in text, path.name
    if "longtable" not in text:
        assert r"\centering" in text
