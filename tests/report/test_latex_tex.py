"""LaTeX tables checked by TeX itself: every committed .tex compiled in a standard article, with no
overfull box and no float taller than the page; the width model's size factors checked against the
installed fonts' metrics. Skipped where pdflatex is not installed (.ci/run installs it)."""

import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from ehi.report.latex import table_tex
from ehi.report.latex_fit import _CMR10, FONTS

REPO = Path(__file__).resolve().parents[2]
COMMITTED = sorted(p for p in (REPO / "results").rglob("*.tex") if "_timings." not in p.name)  # git-ignored
PREAMBLE = "\\documentclass{article}\n\\usepackage{booktabs,longtable}\n\\begin{document}\n"
pytestmark = [pytest.mark.skipif(not shutil.which("pdflatex"), reason="pdflatex is not installed"),
              pytest.mark.slow]  # pdflatex over every committed table


def compile_log(body: str, folder: Path) -> str:
    """pdflatex's log of ``body`` set in an article with booktabs and longtable."""
    (folder / "doc.tex").write_text(PREAMBLE + body + "\n\\end{document}\n")
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-draftmode", "doc.tex"],
                         cwd=folder, capture_output=True, text=True, errors="replace", timeout=60)  # TeX prints latin-1 in its log
    log = (folder / "doc.log").read_text(errors="replace")
    assert run.returncode == 0, log[-2000:]
    return log


def problems(log: str) -> list[str]:
    return re.findall(r"Overfull \\hbox \([\d.]+pt too wide\)|Float too large for page by [\d.]+pt", log)


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.name)
def test_every_committed_table_compiles_within_the_page(path, tmp_path):
    assert problems(compile_log(f"\\input{{{path}}}", tmp_path)) == []


def test_the_check_sees_an_overfull_table_and_a_float_taller_than_the_page(tmp_path):
    wide = "\\begin{tabular}{l}\n" + "x" * 80 + " \\\\\n\\end{tabular}"
    tall = "\\begin{table}\n" + "\\rule{1pt}{20pt}\\\\\n" * 40 + "\\end{table}"
    found = problems(compile_log(wide + "\n\n" + tall, tmp_path))
    assert len(found) == 2 and found[0].startswith("Overfull") and found[1].startswith("Float too large")


def test_a_table_of_many_stacked_parts_or_wrapped_rows_is_set_on_as_many_pages_as_it_takes(tmp_path):
    parts = pd.DataFrame([[f"set {i}", *range(40)] for i in range(5)], columns=["dataset", *map(str, range(40))])
    parts.columns = ["dataset", *[f"system number {i}" for i in range(40)]]
    wordy = pd.DataFrame({"claim": list("abcdefghijklmnopqrst"),
                          "why": ["EHI's tree is at least every peer at the same budget, and " * 6] * 20})
    for df in (parts, wordy):
        tex = table_tex(df, caption="a tall table", label="tab:tall")
        assert "longtable" in tex and problems(compile_log(tex, tmp_path)) == []


def tfm_widths(font: str) -> dict[str, float]:
    """{character: width in pt} of a Computer Modern font, from its TFM file (tftopl)."""
    tfm = subprocess.run(["kpsewhich", f"{font}.tfm"], capture_output=True, text=True).stdout.strip()
    pl = subprocess.run(["tftopl", tfm], capture_output=True, text=True).stdout
    size = float(re.search(r"\(DESIGNSIZE R ([\d.]+)\)", pl).group(1))
    widths = {}
    for m in re.finditer(r"\(CHARACTER (?:C (\S)|O (\d+))\s*\(CHARWD R ([-\d.]+)\)", pl):
        widths[m.group(1) or chr(int(m.group(2), 8))] = float(m.group(3)) * size
    return widths


@pytest.mark.skipif(not shutil.which("tftopl"), reason="tftopl is not installed")
def test_each_size_factor_is_its_fonts_widest_ratio_to_cmr10():
    """Each size's factor: the largest ratio, over the letters, digits
    and punctuation the model lists, of that font's width to cmr10's; never below (a table set
    wider than modelled overflows), at most 0.1% above."""
    base = tfm_widths("cmr10")
    listed = [c for c in _CMR10 if c.isascii() and c.isalnum() or c in ".,:;()-"]
    for size, factor, design, _ in FONTS:
        font = tfm_widths(f"cmr{design}")
        widest = max(font[c] / base[c] for c in listed)
        assert widest <= factor <= widest * 1.001, (size, factor, widest)
