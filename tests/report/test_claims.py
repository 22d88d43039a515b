"""Verdicts on the paper's claims, from hand-made significance tables."""

import pandas as pd
import pytest

from ehi.report.claims import evaluate_claims, load_claims, main
from ehi.core.io import write_table

COLS = ["dataset", "metric", "budget", "system_a", "system_b", "mean_a", "mean_b", "delta", "test", "p_value",
        "p_adjusted", "significant"]
SPEC = {"alpha": 0.05, "test": "randomization", "claims": {
    "a": {"text": "tree >= ivf", "system": "ehi+tree", "versus": ["de+faiss-ivf"], "metrics": ["ndcg@10"],
          "max_budget": 0.1, "ok_within": 0.0, "okish_within": 0.01},
    "b": {"text": "exact within 0.005", "system": "ehi+exact", "versus": ["de+exact"], "metrics": ["ndcg@10"],
          "max_budget": 1.0, "ok_within": 0.005, "okish_within": 0.01},
    "e": {"text": "tree >= hnsw", "system": "ehi+tree", "versus": ["de+faiss-hnsw"], "metrics": ["ndcg@10"],
          "max_budget": 0.1, "ok_within": 0.0, "okish_within": 0.01},
}}


def row(budget, a, b, mean_a, mean_b, p, test="randomization"):
    return ("d", "ndcg@10", budget, a, b, mean_a, mean_b, mean_a - mean_b, test, p, p, p < 0.05)


def results(tmp_path, rows):
    write_table(pd.DataFrame(rows, columns=COLS), "significance", tmp_path / "significance.parquet")
    return tmp_path


def test_ok_okish_fail_and_significance_verdicts(tmp_path):
    rows = [row(0.05, "ehi+tree", "de+faiss-ivf", 0.50, 0.45, 0.01),  # for the claim, significant
            row(0.10, "ehi+tree", "de+faiss-ivf", 0.60, 0.605, 0.6),  # 0.005 short: OKish
            row(0.20, "ehi+tree", "de+faiss-ivf", 0.10, 0.90, 0.001),  # above max_budget: ignored
            row(0.05, "ehi+tree", "de+faiss-ivf", 0.0, 0.9, 0.001, test="t-test"),  # other test: ignored
            row(1.0, "ehi+exact", "de+exact", 0.650, 0.653, 0.7)]  # 0.003 short, within 0.005: OK
    table = evaluate_claims(results(tmp_path, rows), SPEC).set_index("claim")
    assert table.loc["a", "verdict"] == "OKish" and table.loc["a", "comparisons"] == 2
    assert table.loc["a", "worst_delta"] == pytest.approx(-0.005)
    assert table.loc["a", "significant_for"] == 1 and table.loc["a", "significant_against"] == 0
    assert table.loc["a: significance", "verdict"] == "OK"
    assert table.loc["b", "verdict"] == "OK"
    assert table.loc["e", "verdict"] == "n/a"  # no HNSW comparison in the results: said, not guessed


def test_a_significant_shortfall_fails_both_the_claim_and_its_significance(tmp_path):
    rows = [row(0.1, "de+faiss-ivf", "ehi+tree", 0.70, 0.40, 0.001)]  # stored the other way round
    table = evaluate_claims(results(tmp_path, rows), SPEC).set_index("claim")
    assert table.loc["a", "verdict"] == "FAIL" and table.loc["a", "worst_delta"] == pytest.approx(-0.3)
    assert "0.400 vs 0.700" in table.loc["a", "worst_at"]
    assert table.loc["a: significance", "verdict"] == "FAIL"


def test_a_config_without_an_ehi_system_gets_every_claim_not_applicable(tmp_path):
    """systems: [pre+exact, pre+faiss-ivf]: rule significance writes a table without rows, and the
    claims rule of `all` reads it: each claim n/a (no comparison), not an IndexError."""
    table = evaluate_claims(results(tmp_path, []), SPEC)
    assert list(table.verdict) == ["n/a"] * len(SPEC["claims"]) and (table.comparisons == 0).all()


def test_shipped_claims_file_and_command(tmp_path, capsys):
    spec = load_claims()
    assert set(spec["claims"]) == {"a", "b", "c", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p"}
    assert spec["claims"]["f"]["system"] == "ehi-warm+tree"  # the stabilised tree (evaluation.variant_systems)
    assert spec["claims"]["g"]["system"] == "ehi-floor+tree" and "ehi+faiss-ivf" in spec["claims"]["g"]["versus"]
    # h to m are claims a and b with another recipe's tree or encoder in EHI's place: the floor
    # recipe's (h, i), the two-stage tree (j), EHI from DE (k, l), the screen's best point (m), and
    # the floor recipe's two-stage tree (n) and its start from DE (o, p)
    for floor, paper in (("h", "a"), ("i", "b"), ("j", "a"), ("k", "a"), ("l", "b"), ("m", "a"),
                         ("n", "a"), ("o", "a"), ("p", "b")):
        assert {k: v for k, v in spec["claims"][floor].items() if k not in ("text", "source", "system")} == \
            {k: v for k, v in spec["claims"][paper].items() if k not in ("text", "source", "system")}
    assert [spec["claims"][c]["system"] for c in "hijklmnop"] == [
        "ehi-floor+tree", "ehi-floor+exact", "ehi-2stage+tree", "ehi-fromde+tree", "ehi-fromde+exact", "ehi-screen+tree",
        "ehi-2stage-floor+tree", "ehi-fromde-floor+tree", "ehi-fromde-floor+exact"]
    rows = [row(0.1, "ehi+tree", "de+faiss-ivf", 0.5, 0.4, 0.01), row(0.1, "ehi-warm+tree", "de+faiss-ivf", 0.395, 0.4, 0.5)]
    assert main([str(results(tmp_path, rows)), "--out", str(tmp_path / "out" / "claims")]) == 0
    printed = capsys.readouterr().out
    table = evaluate_claims(tmp_path, spec).set_index("claim")
    assert table.loc["f", "verdict"] == "OKish" and table.loc["f", "worst_delta"] == pytest.approx(-0.005)
    assert "| a " in printed and "OK" in printed and printed.rstrip().endswith(f"(every column: {tmp_path / 'out' / 'claims'}.md)")
    assert max(map(len, printed.splitlines()[:-1])) < 120  # a terminal's width; the file has every column
    written = (tmp_path / "out" / "claims.md").read_text()
    assert "| text " in written and "| text " not in printed and printed.splitlines()[2][:40] == written.splitlines()[2][:40]
    assert main([str(tmp_path / "nowhere")]) == 2
    assert "significance.parquet not found" in capsys.readouterr().err


def test_over_seeds_a_difference_within_the_seed_spread_is_significant_for_neither_side(tmp_path):
    rows = [row(0.05, "ehi+tree", "de+faiss-ivf", 0.40, 0.45, 0.001), row(0.1, "ehi+tree", "de+faiss-ivf", 0.40, 0.48, 0.001)]
    frame = pd.DataFrame(rows, columns=COLS).assign(within_seed_spread=[True, False], sd_a=[0.06, 0.02], sd_b=0.01)
    write_table(frame, "significance", tmp_path / "significance.parquet", keep_extra=True)
    table = evaluate_claims(tmp_path, SPEC).set_index("claim")
    assert table.loc["a", "verdict"] == "FAIL"  # the seed means are still below
    assert table.loc["a", "significant_against"] == 1  # only the comparison outside the seed spread


def test_on_vectors_the_trees_meet_the_searches_of_the_vectors_as_given(tmp_path):
    """The pre+ searches the significance tests hold on a vectors run (evaluation.pre_baselines) are
    the peers of claims c, e and g: k-means IVF with as many lists, HNSW, dev-tuned IVF."""
    rows = [row(0.05, "ehi+tree", "pre+faiss-hnsw", 0.40, 0.45, 0.001),  # HNSW ahead: claim e fails
            row(0.05, "ehi+tree", "pre+ivf-lists", 0.40, 0.39, 0.5),
            row(0.05, "ehi-floor+tree", "pre+ivf-lists", 0.50, 0.39, 0.001),
            row(0.10, "ehi-floor+tree", "pre+faiss-ivf", 0.55, 0.50, 0.001)]
    table = evaluate_claims(results(tmp_path, rows)).set_index("claim")
    assert table.loc["e", "verdict"] == "FAIL" and "vs pre+faiss-hnsw" in table.loc["e", "worst_at"]
    assert table.loc["c", "verdict"] == "OK" and table.loc["c", "comparisons"] == 1
    assert table.loc["g", "verdict"] == "OK" and table.loc["g", "significant_for"] == 2
