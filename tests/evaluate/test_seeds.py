"""Seeds as a dimension of the results (ehi.evaluate.seeds): replica paths, KMR over seeds, per-query
values averaged over seeds and the seed spread beside each paired test."""

import numpy as np
import pandas as pd
import pytest

from ehi.evaluate.metrics import summarize
from ehi.evaluate.seeds import (KMR_POINT, kmr_over_seeds, per_query_over_seeds, replica, replicas, seed_column,
                                with_seed_spread)
from ehi.evaluate.stats import significance_report


SEEDS_01 = {"main": {"main": 0, "seed~1": 1}}  # the main setting's replicas of train.seeds [0, 1]


def test_replicas_are_named_with_their_seeds():
    assert replica("main", 1) == "seed~1"
    assert replica("indexer_init~kmeans", 2) == "indexer_init~kmeans/seed~2"
    assert replicas(["main"], [0, 1, 2], 0) == {"main": {"main": 0, "seed~1": 1, "seed~2": 2}}
    assert replicas(["main"], [3], 3) == {"main": {"main": 3}}
    assert list(replicas(["height~1"], [2, 0, 1], 0)["height~1"]) == ["height~1", "height~1/seed~2", "height~1/seed~1"]


def test_the_seed_column_reads_each_replicas_seed_by_its_name():
    frame = pd.DataFrame({"variant": ["main", "seed~1", "height~1/seed~2", "height~1", "floor~kmeans"]})
    seeded = seed_column(frame, {**SEEDS_01, **replicas(["height~1"], [0, 2], 0)}, 0)
    assert list(seeded.variant) == ["main", "main", "height~1", "height~1", "floor~kmeans"]
    assert list(seeded.seed) == [0, 1, 2, 0, 0]  # a variant without replicas: the main seed


def _per_query(seed_values: dict[str, list[float]], system: str, fracs=(0.04, 0.08), n_queries: int = 6,
               rng=None) -> pd.DataFrame:
    """Per-query rows of one system: a two-point curve (beam 1, 2) per seed variant."""
    rows = []
    for variant, means in seed_values.items():
        for beam, (frac, mean) in enumerate(zip(fracs, means), start=1):
            noise = rng.normal(0, 0.01, n_queries) if rng is not None else np.zeros(n_queries)
            for q in range(n_queries):
                rows.append({"dataset": "d", "system": system, "variant": variant, "budget_param": "beam",
                             "budget_value": float(beam), "query_id": str(q), "metric": "ndcg@10",
                             "frac_visited": frac, "value": mean + noise[q]})
    return pd.DataFrame(rows)


def test_kmr_over_seeds_is_the_mean_of_each_seeds_kmr_point():
    pq = _per_query({"main": [0.5, 0.6], "seed~1": [0.4, 0.8]}, "ehi+tree")
    summary = pd.concat([summarize(g.drop(columns="seed")).assign(seed=s) for s, g in seed_column(pq, SEEDS_01, 0).groupby("seed")])
    kmr = kmr_over_seeds(summary, [0.05, 0.1, 0.01], "ndcg@10").set_index("target")
    assert kmr.loc[0.05, "value"] == pytest.approx(0.45) and kmr.loc[0.05, "n_seeds"] == 2
    assert kmr.loc[0.1, "value"] == pytest.approx(0.7)
    assert kmr.loc[0.1, "min"] == pytest.approx(0.6) and kmr.loc[0.1, "max"] == pytest.approx(0.8)
    assert kmr.loc[0.1, "sd"] == pytest.approx(np.std([0.6, 0.8], ddof=1))
    assert np.isnan(kmr.loc[0.01, "value"])  # no seed has a point that cheap


def test_a_budget_one_seed_cannot_reach_has_no_mean():
    pq = pd.concat([_per_query({"main": [0.5, 0.6]}, "ehi+tree"),
                    _per_query({"seed~1": [0.4, 0.8]}, "ehi+tree", fracs=(0.06, 0.08))])
    seeded = seed_column(pq, SEEDS_01, 0)
    summary = pd.concat([summarize(g.drop(columns="seed")).assign(seed=s) for s, g in seeded.groupby("seed")])
    kmr = kmr_over_seeds(summary, [0.05], "ndcg@10")
    assert np.isnan(kmr.value.iloc[0])
    averaged = per_query_over_seeds(seeded, [0.05], ["ndcg@10"])
    assert averaged[averaged.budget_value == 0.05].empty


def test_per_query_values_are_averaged_over_seeds_at_each_seeds_point():
    rng = np.random.default_rng(0)
    pq = pd.concat([_per_query({"main": [0.5, 0.6], "seed~1": [0.2, 0.8]}, "ehi+tree", rng=rng),
                    _per_query({"main": [0.3, 0.5], "seed~1": [0.3, 0.5]}, "de+faiss-ivf", rng=rng)])
    seeded = seed_column(pq, SEEDS_01, 0)
    averaged = per_query_over_seeds(seeded, [0.05, 0.1], ["ndcg@10"])
    assert set(averaged.budget_param) == {KMR_POINT}
    at = averaged[(averaged.system == "ehi+tree") & (averaged.budget_value == 0.1)].set_index("query_id").value
    expected = seeded[(seeded.system == "ehi+tree") & (seeded.budget_value == 2.0)].groupby("query_id").value.mean()
    pd.testing.assert_series_equal(at.sort_index(), expected.sort_index(), check_names=False)
    table = significance_report(averaged, ["ndcg@10"], [0.05, 0.1], n_permutations=200)
    row = table[(table.budget == 0.1) & (table.test == "t-test")].iloc[0]
    assert row.mean_a == pytest.approx(0.7, abs=0.01) and row.mean_b == pytest.approx(0.5, abs=0.01)
    assert row.budget_a == pytest.approx(0.08)
    spread = with_seed_spread(table, seeded, [0.05, 0.1], ["ndcg@10"])
    row = spread[(spread.budget == 0.1) & (spread.test == "t-test")].iloc[0]
    assert row.n_seeds_a == 2 and row.sd_a == pytest.approx(np.std([0.6, 0.8], ddof=1), abs=0.01)
    assert not row.within_seed_spread  # delta 0.2 > sd 0.14
    row = spread[(spread.budget == 0.05) & (spread.test == "t-test")].iloc[0]
    assert row.delta == pytest.approx(0.05, abs=0.01) and row.within_seed_spread  # sd 0.21 over seeds
