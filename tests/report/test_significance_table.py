"""The compact significance table: a row per pair and metric, budgets as columns, marked deltas."""

from pathlib import Path

import pandas as pd
import pytest

from ehi.report.latex import latex_problems
from ehi.report.significance_table import SCREEN_ROWS, render_significance, significance_markdown, significance_wide

TABLES = Path(__file__).resolve().parents[2] / "results" / "tables"


def _sig():
    rows = []
    for metric in ("ndcg@10", "recall@100"):
        for budget, delta, p in ((0.01, -0.2, 0.001), (0.1, 0.05, 0.3)):
            for test, p_adj in (("t-test", p), ("randomization", p * 2)):
                rows.append({"metric": metric, "budget": budget, "system_a": "ehi+tree", "system_b": "de+faiss-ivf",
                             "delta": delta, "test": test, "p_adjusted": p_adj, "significant": p_adj < 0.05})
        rows += [{"metric": metric, "budget": 1.0, "system_a": "ehi+exact", "system_b": "de+exact", "delta": 0.0,
                  "test": test, "p_adjusted": 1.0, "significant": False} for test in ("t-test", "randomization")]
    return pd.DataFrame(rows)


def test_one_row_per_pair_and_metric_with_budgets_as_columns():
    wide = significance_wide(_sig())
    assert list(wide.columns) == ["metric", "A", "B", "1%", "10%", "100%"]
    assert len(wide) == 4
    first = wide.iloc[0]
    assert (first["1%"], first["10%"]) == ("-0.200*", "+0.050") and pd.isna(first["100%"])


def test_markdown_has_a_section_per_metric_and_the_csv_the_long_form(tmp_path):
    md, tex, csv, page = render_significance(_sig(), tmp_path / "sig", caption="toy")
    text = md.read_text()
    assert "### ndcg@10" in text and "### recall@100" in text and "nan" not in text and "–" in text
    assert "-0.200*" in text  # kept as written, not re-read as a number
    assert "<td>-0.200*</td>" in page.read_text()  # the report's view: the same cells
    assert latex_problems(tex.read_text()) == []
    pd.testing.assert_frame_equal(pd.read_csv(csv), _sig())


@pytest.mark.parametrize("path", [p for p in sorted(TABLES.glob("*_significance.md")) if "ablation" not in p.name],
                         ids=lambda p: p.name)
def test_each_committed_metric_section_fits_on_a_screen(path):
    sections = path.read_text().split("### ")[1:]
    assert sections, "no per-metric sections"
    for section in sections:
        rows = [line for line in section.splitlines() if line.startswith("|")]
        assert len(rows) <= 40 and max(len(line) for line in rows) <= 120, section.splitlines()[0]


def test_a_metric_longer_than_a_screen_is_split_between_systems():
    """11 trees against 5 peers (55 rows of one metric) read as screenfuls, each tree's rows in one."""
    wide = pd.DataFrame([{"metric": "ndcg@10", "A": f"ehi-{i}+tree", "B": f"peer-{j}", "1%": "+0.010*"}
                         for i in range(11) for j in range(5)])
    sections = significance_markdown(wide, "").split("### ")[1:]
    assert [s.splitlines()[0] for s in sections] == ["ndcg@10 (1 of 2)", "ndcg@10 (2 of 2)"]
    bodies = [[line for line in s.splitlines() if line.startswith("| ehi-")] for s in sections]
    assert all(len(b) <= SCREEN_ROWS for b in bodies) and sum(map(len, bodies)) == 55
    firsts = [{line.split("|")[1].strip() for line in b} for b in bodies]
    assert not firsts[0] & firsts[1]  # no tree's rows on two screens
    short = significance_markdown(wide[wide.A == "ehi-0+tree"], "")
    assert short.startswith("### ndcg@10\n")  # a metric within a screen keeps its plain heading
