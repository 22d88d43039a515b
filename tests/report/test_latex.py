"""LaTeX tables that compile: escaping, "--" for missing values, and every committed .tex checked."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ehi.report.figures import markdown_table, render_table
from ehi.report.latex import escape, latex_problems

TABLES = Path(__file__).resolve().parents[2] / "results" / "tables"
NASTY = pd.DataFrame({"metric": ["ndcg@10", "recall@100"], "system": ["de+scann_ah", "ehi-warm+tree"],
                      "1%": [np.nan, 0.25], "a & b": ["x^2 #1 $5", "{~\\}"]})


@pytest.mark.parametrize("path", sorted(TABLES.glob("*.tex")), ids=lambda p: p.name)
def test_every_committed_tex_table_parses(path):
    assert latex_problems(path.read_text()) == []


def test_a_table_of_every_special_character_parses(tmp_path):
    md, tex, csv, page = render_table(NASTY, tmp_path / "t", caption="at <= 10% of documents, variant_systems")
    assert latex_problems(tex.read_text()) == []
    assert r"1\%" in tex.read_text() and r"de+scann\_ah" in tex.read_text() and " -- " in tex.read_text()
    assert r"at \textless{}= 10\%" in tex.read_text()
    assert "nan" not in md.read_text() and "| –" in md.read_text()
    pd.testing.assert_frame_equal(pd.read_csv(csv), NASTY)
    shown = pd.read_html(page)[0]  # the report's view: the same cells, escaped
    assert "<p>at &lt;= 10% of documents" in page.read_text() and list(shown.columns) == list(NASTY.columns)
    assert shown["a & b"].tolist() == NASTY["a & b"].tolist() and "<td>–</td>" in page.read_text()


def test_the_check_finds_what_breaks_a_table():
    header = "\\begin{tabular}{lr}\n"
    assert "comment" in latex_problems(header + "a & 1% \\\\\n\\end{tabular}")[0]
    assert "math mode" in latex_problems(header + "de_scann & 1 \\\\\n\\end{tabular}")[0]
    assert "prints as ¡" in latex_problems(header + "a & <= 5 \\\\\n\\end{tabular}")[0]
    assert "3 cells" in latex_problems(header + "a & b & c \\\\\n\\end{tabular}")[0]
    assert "does not parse" in latex_problems(header + "a & {b \\\\\n\\end{tabular}")[0]
    assert latex_problems(header + f"{escape('de_scann 1%')} & $x_1$ \\\\\n\\end{{tabular}}") == []


def test_markdown_marks_missing_values_with_a_dash():
    table = markdown_table(pd.DataFrame({"system": ["a", None], "value": [np.nan, 0.5]}))
    assert "nan" not in table and "None" not in table and table.count("–") == 2
