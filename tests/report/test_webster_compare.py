"""The ``ehi compare`` run on webster's own vectors, kept under results/webster_compare by
benchmarks/record_compare.py (docs/embeddings.md, "Checking the road on a committed study"): the
answer it printed is the one its kept tables give, and it rests on the timed comparison and on the
study it repeats. Its cells beside the study's are re-rendered by rule compare_check in
tests/workflow/test_committed_tables.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from ehi.core.io import read_table
from ehi.report.answer import paragraph

REPO = Path(__file__).resolve().parents[2]
RUN = REPO / "results" / "webster_compare"


def _record() -> dict:
    return json.loads((RUN / "run.json").read_text())


def test_the_kept_answer_is_the_one_its_kept_tables_give():
    """report.md's paragraph, read again from the kept significance table and timed benchmark: every
    number it states comes from them."""
    record = _record()
    text = paragraph(read_table(RUN / "significance.parquet"), RUN / "trained_matched.parquet", record["dataset"])
    assert text in (RUN / "report.md").read_text().splitlines()


def test_the_run_was_timed_and_its_answer_states_the_qps_ratios():
    """The run holds the timed comparison (flat and PQ leaves against every peer) and its answer gives
    the tree's queries a second against the best peer's at equal nDCG@10."""
    record = _record()
    assert {"trained.md", "trained_matched.parquet", "trained_pareto.png"} <= set(record["files"])
    matched = pd.read_parquet(RUN / "trained_matched.parquet")
    assert len(matched), "the timed comparison matched no quality"
    assert "QPS" in (RUN / "report.md").read_text()


def test_the_run_is_one_seed_of_the_study_it_is_held_to_with_its_cost():
    """One training seed, the command as it ran, its measured cost and the three-seed plan's projection
    (what docs/embeddings.md states)."""
    record = _record()
    assert "--seeds 0" in record["command"] and "resources/vectors/webster_minilm" in record["command"]
    assert record["wall_s"] > 0 and record["cpu_s"] > 0 and record["max_rss_mb"] > 0
    assert record["projected"]["wall_s"] > record["wall_s"]
    kmr = pd.read_csv(RUN / "kmr.csv")
    assert {"de+faiss-ivf", "de+scann", "de+faiss-hnsw", "ehi-2stage+tree"} <= set(kmr.system)


def _h_min(seconds: float) -> str:
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"{hours} h {minutes} min"


def test_the_docs_state_the_kept_runs_cost_and_the_three_seed_projection():
    """docs/embeddings.md's account of the kept run reads its figures from run.json: the wall time in
    all (the stopped call's and the resumed one's), the CPU seconds GNU time reported, the peak
    memory and the three-seed run's projected wall time."""
    record = _record()
    text = " ".join((REPO / "docs" / "embeddings.md").read_text().split())
    for figure in (f"{_h_min(record['wall_s'])} of wall time in all", f"{round(record['cpu_s']):,} CPU seconds",
                   f"{record['max_rss_mb'] / 1000:.1f} GB at its peak", f"{record['projected']['jobs']} jobs)",
                   f"projected from them at {_h_min(record['projected']['wall_s'])}"):
        assert figure in text, figure
    check = (REPO / "results" / "tables" / "webster_joint_compare_check.md").read_text()
    landed = re.search(r"^(\d+) of (\d+) cells within", check, re.M)
    assert landed and f"All {landed[2]} of its cells that the study has" in text and landed[1] == landed[2]


def test_the_docs_quote_the_kept_answers_differences():
    """Every signed difference docs/embeddings.md quotes from the kept answer is one report.md states."""
    text = " ".join((REPO / "docs" / "embeddings.md").read_text().split())
    quoted = re.search(r"Its answer \(`results/webster_compare/report.md`\):(.*?)queries a second", text)
    assert quoted, "docs/embeddings.md quotes no answer of the kept run"
    report = (RUN / "report.md").read_text()
    differences = re.findall(r"[+-]0\.\d{3}", quoted[1])
    assert differences and all(d in report for d in differences), differences
