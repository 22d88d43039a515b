"""The one-paragraph answer of ``ehi compare`` (ehi/report/answer.py), built from small significance
and timing tables: its numbers are the tables', and a loss is said as plainly as a win."""

import re

import numpy as np
import pandas as pd

from ehi.core.io import read_table, write_table
from ehi.report.answer import BUDGETS, answer, closing_lines

PRE_LISTS = "pre+ivf-lists"  # the frozen study's lists control
PEERS = (PRE_LISTS, "pre+faiss-ivf", "pre+faiss-hnsw")


def significance(trees: dict[str, float], peers: dict[str, float], significant: bool, seed: int = 0) -> pd.DataFrame:
    """Each tree against each peer at each budget, means drawn around the given levels; both tests."""
    rng = np.random.default_rng(seed)
    rows = []
    for budget in BUDGETS:
        means = {s: level + budget + 0.01 * rng.random() for s, level in {**trees, **peers}.items()}
        for tree in trees:
            for peer in peers:
                for test in ("t-test", "randomization"):
                    delta = means[tree] - means[peer]
                    rows.append({"dataset": "mine", "metric": "ndcg@10", "budget": budget, "system_a": tree,
                                 "system_b": peer, "mean_a": means[tree], "mean_b": means[peer], "delta": delta,
                                 "test": test, "p_value": 0.001, "p_adjusted": 0.004 if significant else 0.4,
                                 "significant": significant, "n_queries": 300, "family": "budgets"})
    return pd.DataFrame(rows)


def run(tmp_path, sig: pd.DataFrame, matched: pd.DataFrame | None = None):
    write_table(sig, "significance", tmp_path / "results" / "mine" / "significance.parquet", keep_extra=True)
    if matched is not None:
        path = tmp_path / "results" / "benchmarks" / "trained_mine" / "trained_matched.parquet"
        path.parent.mkdir(parents=True)
        matched.to_parquet(path)
    return answer(tmp_path, "mine")


def cells(text: str) -> list[tuple[str, str, str]]:
    """Every ``a vs b (+d, ...)`` the paragraph states."""
    return re.findall(r"(\d\.\d{3}) vs (?:\S+ )?(\d\.\d{3}) \(([+-]\d\.\d{3}),", text)


def test_a_win_gives_the_tables_numbers_and_says_use_the_tree(tmp_path):
    sig = significance({"ehi+tree": 0.30, "ehi-floor+tree": 0.40}, dict.fromkeys(PEERS, 0.30), True)
    text = run(tmp_path, sig)
    table = read_table(tmp_path / "results" / "mine" / "significance.parquet")
    floor = table[(table.system_a == "ehi-floor+tree") & (table.test == "randomization")]
    lists = floor[floor.system_b == PRE_LISTS].sort_values("budget")
    best = floor.loc[floor.groupby("budget").mean_b.idxmax()].sort_values("budget")
    expected = [(f"{r.mean_a:.3f}", f"{r.mean_b:.3f}", f"{r.delta:+.3f}") for r in (*lists.itertuples(), *best.itertuples())]
    assert cells(text) == expected
    assert "the better learned partition is ehi-floor+tree" in text and text.count("(+") == 8
    assert "The learned partition pays here: use ehi-floor+tree" in text
    assert "not timed (ehi compare --time)" in text


def test_a_loss_is_said_plainly_with_the_peer_to_use(tmp_path):
    sig = significance({"ehi+tree": 0.20, "ehi-floor+tree": 0.25}, {PRE_LISTS: 0.30, "pre+faiss-ivf": 0.35,
                                                                      "pre+faiss-hnsw": 0.32}, True)
    text = run(tmp_path, sig)
    assert "The learned partition loses here: use pre+faiss-ivf" in text and "(+" not in text
    assert all(d.startswith("-") for _, _, d in cells(text))


def test_no_significant_difference_is_no_reason_to_train(tmp_path):
    sig = significance({"ehi+tree": 0.30}, dict.fromkeys(PEERS, 0.30), False)
    text = run(tmp_path, sig[sig.budget > 0.01])  # no point under 1% of work: said, not left out silently
    assert text.count("not significant") == 6 and "a learned partition does not pay on these vectors" in text
    assert "ehi+tree (no point of it at 1% of work)" in text


def test_the_timed_ratios_are_the_benchmarks_and_the_report_opens_with_the_answer(tmp_path):
    matched = pd.DataFrame({"ehi": "ehi-floor+tree", "peer": "pre+faiss-hnsw", "metric": "ndcg@10",
                            "target_share": [0.9, 0.95, 0.99], "qps_ratio": [1.234, 0.876, 2.5]})
    sig = significance({"ehi+tree": 0.30, "ehi-floor+tree": 0.40}, dict.fromkeys(PEERS, 0.30), True)
    text = run(tmp_path, sig, matched)
    assert "ehi-floor+tree 1.23/0.88/2.50x pre+faiss-hnsw (at 90%/95%/99% of the pair's best)" in text
    lines = closing_lines(tmp_path, "mine", {"claims": "results/tables/mine_claims.md"})
    assert lines[-1] == text and lines[-2].endswith("report.md")
    report = (tmp_path / "report.md").read_text().splitlines()
    assert report[2] == text and report[-1] == "- claims: `results/tables/mine_claims.md`"
    assert "<p>" in (tmp_path / "report.html").read_text()


def test_a_run_with_no_tree_against_a_peer_says_it_gives_no_answer(tmp_path):
    sig = significance({"ehi+tree": 0.3}, {"ehi-floor+tree": 0.3}, True)  # tree against tree only
    assert run(tmp_path, sig).endswith("so this run gives no answer.")
    assert answer(tmp_path / "nowhere", "mine") is None


def test_the_decisive_run_sets_the_two_stage_tree_against_the_lists_of_des_vectors(tmp_path):
    """Where a DE was trained, the two-stage tree's own partition control is k-means on DE's vectors."""
    peers = {"de+ivf-lists": 0.30, "de+faiss-ivf": 0.31, "de+faiss-hnsw": 0.45}
    sig = significance({"ehi-2stage+tree": 0.36, "ehi+tree": 0.20}, peers, True)
    text = run(tmp_path, sig)
    assert "the better learned partition is ehi-2stage+tree" in text
    assert "against k-means IVF with as many lists (de+ivf-lists) it scores, at 1% 0." in text
    assert "The learned partition loses here: use de+faiss-hnsw" in text


def test_a_run_whose_trees_have_no_point_at_1_to_10_percent_of_work_says_so(tmp_path):
    """A small corpus where routing alone costs over 10% of work: the table has rows, none at the
    paragraph's budgets."""
    sig = significance({"ehi+tree": 0.3}, {PRE_LISTS: 0.3}, True)
    sig = sig.assign(budget=0.2, system_a=sig.system_a.astype("str"), system_b=sig.system_b.astype("str"))
    assert run(tmp_path, sig).endswith("so this run gives no answer.")
