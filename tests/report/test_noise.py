"""Where a result is noise (ehi.report.noise, evaluation.noise_notes), and the budget axis the
reports read (ehi.core.work.on_budget_axis, evaluation.budget_axis)."""

import pandas as pd
import pytest

from ehi.core.errors import DataError
from ehi.core.work import on_budget_axis
from ehi.report.noise import claim_noise_notes, claims_file_note, near_chance_note, no_verdict_note
from ehi.report.seed_tables import kmr_over_seeds_wide


def _summary(exact: float) -> pd.DataFrame:
    return pd.DataFrame({"system": ["pre+exact", "pre+faiss-ivf", "pre+exact"], "metric": ["ndcg@10", "ndcg@10", "recall@10"],
                         "value": [exact, 0.047, 0.02]})


def test_exact_search_near_chance_is_one_line_naming_it():
    note = near_chance_note(_summary(0.026))
    assert note == ("Warning: exact search scores ndcg@10 pre+exact 0.026, near chance (below 0.05): the vectors barely "
                    "rank the judged documents, and every difference between systems here is noise.")
    assert near_chance_note(_summary(0.4)) is None


def test_a_verdict_no_significant_comparison_supports_is_called_noise():
    claims = pd.DataFrame([
        {"claim": "g", "verdict": "OK", "comparisons": 16, "significant_for": 0, "significant_against": 0},
        {"claim": "g: significance", "verdict": "OK", "comparisons": 16, "significant_for": 0, "significant_against": 0},
        {"claim": "c", "verdict": "FAIL", "comparisons": 16, "significant_for": 0, "significant_against": 3},
        {"claim": "a", "verdict": "n/a", "comparisons": 0, "significant_for": None, "significant_against": None}])
    assert claim_noise_notes(claims) == [
        "Warning: claim g is OK by a difference no paired test tells from noise (0 of 16 comparisons significant): "
        "read it as no evidence either way."]



def test_a_run_where_every_claim_is_not_applicable_says_so_in_one_line(tmp_path):
    claims = pd.DataFrame([{"claim": c, "verdict": "n/a", "comparisons": 0, "significant_for": None,
                            "significant_against": None} for c in "abcg"])
    notes = claim_noise_notes(claims)
    assert len(notes) == 1 and notes[0].startswith("Warning: every claim is n/a: ") and "\n" not in notes[0]
    claims.to_csv(tmp_path / "mine_claims.csv", index=False)  # as the claims rule writes it, read by ehi compare
    assert claims_file_note(tmp_path / "mine_claims.csv") == notes[0]
    assert claims_file_note(tmp_path / "nowhere.csv") is None
    assert no_verdict_note(claims.assign(verdict=["n/a", "n/a", "FAIL", "n/a"])) is None


def test_a_system_run_once_shows_no_seed_spread_where_asked():
    rows = [{"dataset": "d", "system": system, "variant": "main", "budget_param": "b", "budget_value": 1.0,
             "frac_visited": 1.0, "metric": "ndcg@10", "value": 0.3 + seed / 100, "seed": seed}
            for system, seeds in (("pre+exact", (0,)), ("ehi+tree", (0, 1))) for seed in seeds]
    shown = {spread: kmr_over_seeds_wide(pd.DataFrame(rows), ["ndcg@10"], [1.0], one_seed_spread=spread)[0]
             .set_index("system")["100%"] for spread in (True, False)}
    assert shown[True]["pre+exact"] == "0.300 ± 0.000" and shown[False]["pre+exact"] == "0.300"
    assert shown[False]["ehi+tree"] == shown[True]["ehi+tree"] == "0.305 ± 0.007"


def test_the_work_axis_moves_the_budget_column_and_needs_the_routing():
    rows = pd.DataFrame({"frac_visited": [0.027, 0.05], "frac_work": [0.045, 0.07], "value": [0.1, 0.2]})
    assert on_budget_axis(rows, "documents") is rows
    assert on_budget_axis(rows, "work").frac_visited.tolist() == [0.045, 0.07]
    with pytest.raises(DataError, match="budget_axis work reads each query's routing"):
        on_budget_axis(rows.assign(frac_work=float("nan")), "work", "x.parquet")


def test_a_query_whose_point_scored_nothing_is_no_missing_routing():
    """A beam that reached only empty leaves scores no document: neither fraction is known, on
    either axis, and the work axis takes it as the documents axis does."""
    rows = pd.DataFrame({"frac_visited": [0.027, float("nan")], "frac_work": [0.045, float("nan")]})
    moved = on_budget_axis(rows, "work")
    assert moved.frac_visited.iloc[0] == 0.045 and moved.frac_visited.isna().iloc[1]
