"""``ehi compare`` held to a committed study (ehi/report/compare_check.py, rule compare_check): each cell
of the run beside the study's seed mean, within max(3 sd, 0.005) or not, said in one line."""

import json

import numpy as np
import pandas as pd
import pytest

from ehi.report.compare_check import FLOOR, compare_check, run_cells, side_by_side, summary_line

SYSTEMS = ["de+faiss-ivf", "ehi-2stage+tree"]
TARGETS = [0.01, 0.1]


def study(values: dict[tuple[str, float], tuple[float, float]]) -> pd.DataFrame:
    return pd.DataFrame([{"system": s, "target": t, "value": v, "sd": sd, "n_seeds": 3}
                         for (s, t), (v, sd) in values.items()])


def run_frame(values: dict[tuple[str, float], float]) -> pd.DataFrame:
    return pd.DataFrame([{"system": s, "target": t, "run": v} for (s, t), v in values.items()])


def test_a_cell_lands_within_three_sd_or_the_floor_and_the_line_counts_them():
    table = side_by_side(
        run_frame({("de+faiss-ivf", 0.01): 0.203, ("de+faiss-ivf", 0.1): 0.300,
                   ("ehi-2stage+tree", 0.01): 0.150, ("ehi-2stage+tree", 0.1): 0.330}),
        study({("de+faiss-ivf", 0.01): (0.199, 0.001), ("de+faiss-ivf", 0.1): (0.290, 0.004),
               ("ehi-2stage+tree", 0.01): (np.nan, np.nan), ("ehi-2stage+tree", 0.1): (0.310, 0.005)}))
    # 0.004 off within the 0.005 floor (3 sd is 0.003); 0.010 off within 3 x 0.004; 0.020 off outside 0.015
    assert list(table.verdict) == ["within", "within", "no point in the study", "outside"]
    assert table.tolerance.tolist()[:2] == pytest.approx([FLOOR, 0.012])
    line = summary_line(table)
    assert line.startswith("2 of 3 cells within the study's mean ± max(3 sd, 0.005)")
    assert "1 without a point that cheap on a side" in line
    assert "the farthest outside: ehi-2stage+tree at 10%, +0.0200 against ±0.0150" in line


def test_the_run_cells_are_read_from_its_kmr_table_and_a_missing_system_is_refused(tmp_path):
    csv = tmp_path / "kmr.csv"
    pd.DataFrame({"metric": ["ndcg@10", "ndcg@10", "recall@10"], "system": ["de+faiss-ivf", "ehi-2stage+tree", "de+faiss-ivf"],
                  "1%": ["0.1995", "–", "0.3"], "10%": ["0.3001", "0.31", "0.4"]}).to_csv(csv, index=False)
    cells = run_cells(csv, SYSTEMS, "ndcg@10", TARGETS)
    assert cells.run.tolist()[0] == 0.1995 and np.isnan(cells.run.tolist()[2]) and cells.run.tolist()[3] == 0.31
    with pytest.raises(ValueError, match="no ndcg@10 row of de\\+scann"):
        run_cells(csv, ["de+scann"], "ndcg@10", TARGETS)


def test_the_rule_renders_the_study_from_every_seed_on_the_work_axis(tmp_path):
    """Three seeds of a main setting: the study's mean and sd at a budget are over the seeds' points on
    work (frac_work), not on documents scored."""
    summaries = {}
    for seed, value in zip((0, 1, 2), (0.30, 0.31, 0.32)):
        rows = [{"dataset": "d", "system": "de+faiss-ivf", "variant": "main", "budget_param": "nprobe",
                 "budget_value": b, "frac_visited": f, "frac_work": w, "metric": "ndcg@10", "value": value * b}
                for b, f, w in ((1, 0.005, 0.012), (2, 0.009, 0.02), (8, 0.05, 0.06))]
        path = tmp_path / f"s{seed}.parquet"
        pd.DataFrame(rows).to_parquet(path)
        summaries["main" if seed == 0 else f"seed~{seed}"] = path
    run = tmp_path / "run"
    run.mkdir()
    pd.DataFrame({"metric": ["ndcg@10"], "system": ["de+faiss-ivf"], "1%": ["–"], "2%": ["0.62"]}).to_csv(run / "kmr.csv", index=False)
    (run / "run.json").write_text(json.dumps({"dataset": "d_vectors", "command": "ehi compare d_vectors --seeds 0"}))
    check = {"systems": ["de+faiss-ivf"], "metric": "ndcg@10", "targets": [0.01, 0.02]}
    compare_check(run, summaries, {"main": {"main": 0, "seed~1": 1, "seed~2": 2}}, {}, check, "d", tmp_path / "d_compare_check")
    table = pd.read_csv(tmp_path / "d_compare_check.csv")
    # at 1% of work no seed has a point (1.2% is the cheapest); at 2% each seed's nprobe 2: 0.62 mean
    assert table.verdict.tolist() == ["no point on either", "within"]
    assert table["study mean"].tolist()[1] == pytest.approx(0.62) and table["study sd"].tolist()[1] == pytest.approx(0.02)
    md = (tmp_path / "d_compare_check.md").read_text()
    assert md.startswith("`ehi compare d_vectors --seeds 0` (dataset d_vectors, one seed) beside d's seed means")
    assert "1 of 1 cells within" in md
