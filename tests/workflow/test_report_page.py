"""`snakemake --report` on the test config's run: a front page saying what the run was and where
the claims are, and every table shown as HTML in the page (Markdown and CSV show only as a download)."""

import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_report_has_a_front_page_and_shows_its_tables(test_config_run, tmp_path):
    page = tmp_path / "report.html"
    done = subprocess.run([sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--cores", "1",
                           "--directory", str(test_config_run.workdir), "--configfile",
                           str(REPO / "config" / "test" / "test.yaml"), "--report", str(page)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    text = page.read_text()
    assert "on\\nthe dataset <tt class=\\\"docutils literal\\\">test</tt>" in text and "Start with <strong>Claims</strong>" in text
    results = {m.group(1): m.group(2) for m in re.finditer(r'"(results/tables/[^"]+)": \{"name": "[^"]+", .*?"mime_type": "([^"]+)"', text)}
    tables = {name: mime for name, mime in results.items()}
    assert {f"results/tables/test_{t}.html" for t in ("kmr", "significance", "ablations", "ablation_significance",
                                                    "claims")} <= set(tables), json.dumps(tables)
    assert set(tables.values()) == {"text/html"}, tables
