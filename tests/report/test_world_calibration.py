"""The world held to a real collection's facts: one world a grid point, ranked by distance."""

import pytest

from ehi.report.world_calibration import FACTS, calibration_markdown, calibration_table, distance, grid_points

SMALL = dict(n_docs=600, dim=16, n_topics=4, subtopics_per_topic=3, n_train=50, n_dev=40, n_test=10)


def test_grid_points_are_every_combination_over_the_base():
    points = grid_points({"n_docs": 5}, {"query_noise": [1.0, 2.0], "asymmetry": [0.0, 1.0]})
    assert [(p["query_noise"], p["asymmetry"]) for p in points] == [(1.0, 0.0), (1.0, 1.0), (2.0, 0.0), (2.0, 1.0)]
    assert all(p["n_docs"] == 5 for p in points)


def test_distance_sums_the_facts_the_target_has():
    row = {f: 0.5 for f in FACTS}
    assert distance(row, {f: 0.5 for f in FACTS}) == 0
    assert distance(row, {"top1_relevant": 0.2, "exact_ndcg@10": 0.9}) == pytest.approx(0.7)


def test_the_world_a_target_was_measured_on_ranks_first(tmp_path):
    grid = {"query_noise": [0.3, 3.0]}
    table = calibration_table(SMALL, grid, target={f: 0.0 for f in FACTS})
    target = table[table.query_noise == 3.0].iloc[0].to_dict()  # the noisy world's own facts
    ranked = calibration_table(SMALL, grid, target=target)
    assert ranked.query_noise.tolist() == [3.0, 0.3]
    assert ranked.distance.iloc[0] == pytest.approx(0.0)
    assert ranked.distance.iloc[1] > 0
    # a noisier query is less often nearest to its own relevant document
    assert ranked.top1_relevant.iloc[0] < ranked.top1_relevant.iloc[1]
    text = calibration_markdown(ranked, SMALL, "real", target)
    assert "real (target)" in text and text.count("\n|") == 5  # header, rule, the target, two worlds
