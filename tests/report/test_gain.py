"""ehi.report.gain: the tree's gain over IVF at equal work, against hand-computed values."""

import numpy as np
import pandas as pd
import pytest

from ehi.report.gain import gain_rows, work_axis


def _rows(system, seed, budget_value, frac_work, values, frac_visited=None):
    n = len(values)
    return pd.DataFrame({"dataset": "toy", "system": system, "variant": "main", "budget_param": "beam",
                         "budget_value": float(budget_value), "frac_visited": frac_visited if frac_visited is not None else frac_work,
                         "frac_work": frac_work, "query_id": [f"q{i}" for i in range(n)], "metric": "ndcg@10",
                         "value": values, "seed": seed})


def test_gain_is_read_at_each_systems_largest_point_within_the_work_budget():
    rng = np.random.default_rng(0)
    tree = [rng.uniform(size=20) for _ in range(2)]
    ivf = rng.uniform(size=20)
    frames = []
    for seed in (0, 1):
        frames += [_rows("ehi-floor+tree", seed, 1, 0.008, tree[seed]),
                   _rows("ehi-floor+tree", seed, 2, 0.03, tree[seed] + 1)]  # past 2% of work: never read at 2%
        frames += [_rows("ivf-lists+tree", seed, 1, 0.015, ivf)]
    per_query, derived = work_axis(pd.concat(frames, ignore_index=True), leaves=10, n_docs=1000)
    assert not derived
    table = gain_rows(per_query, "ndcg@10", budgets=(0.01, 0.02)).set_index("budget")
    assert np.isnan(table.loc[0.01, "gain"])  # IVF has no point within 1% of work
    want = [tree[s].mean() - ivf.mean() for s in (0, 1)]
    assert table.loc[0.02, "gain"] == pytest.approx(np.mean(want))
    assert table.loc[0.02, "gain_sd"] == pytest.approx(np.std(want, ddof=1))
    assert table.loc[0.02, "n_queries"] == 20 and 0 <= table.loc[0.02, "p"] <= 1


def test_derived_work_adds_the_lists_to_partition_searches_only():
    frame = pd.concat([_rows("ehi+tree", 0, 1, np.nan, [0.5], frac_visited=0.01),
                       _rows("de+faiss-hnsw", 0, 16, np.nan, [0.5], frac_visited=0.01)], ignore_index=True)
    out, derived = work_axis(frame, leaves=50, n_docs=1000)
    assert derived and out.frac_visited.tolist() == pytest.approx([0.06, 0.01])


def test_a_query_without_a_count_does_not_mark_a_counted_dataset_derived():
    """A query that reached only empty leaves scored no document and has no count; its system's
    other queries are counted, so the dataset's work stays counted and that query gets routing only."""
    frame = _rows("ehi+tree", 0, 1, [0.02, np.nan], [0.5, 0.0], frac_visited=[0.01, 0.0])
    out, derived = work_axis(frame, leaves=10, n_docs=1000)
    assert not derived
    assert out.frac_visited.tolist() == pytest.approx([0.02, 0.01])
