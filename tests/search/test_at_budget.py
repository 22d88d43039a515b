"""The one rule for a system at a budget: the largest measured fraction not above it."""

import numpy as np
import pandas as pd

from ehi.evaluate.metrics import kmr_table
from ehi.search.base import at_budget
from ehi.search.tune import score_curve


def test_largest_fraction_within_the_budget_not_the_largest_budget_value():
    frac = [0.01, 0.04, 0.03, 0.06]  # beams 1..4: leaf sets are not nested, fractions not monotone
    assert at_budget(frac, 0.05) == 1 and at_budget(frac, 0.035) == 2 and at_budget(frac, 1.0) == 3


def test_equal_fractions_take_the_later_point_and_rounding_counts_as_within():
    assert at_budget([0.02, 0.05, 0.05, 0.2], 0.05) == 2
    assert at_budget([0.02, 0.1 * (1 + 1e-12)], 0.1) == 1


def test_nothing_that_cheap():
    assert at_budget([0.2, 0.3], 0.1) is None
    assert at_budget([0.3, 0.2, 0.5], 0.1, cheapest_if_none=True) == 1
    assert at_budget([], 0.1, cheapest_if_none=True) is None


def test_tables_and_tuning_read_the_same_point():
    frac, value = np.array([0.01, 0.04, 0.03, 0.06]), np.array([0.2, 0.5, 0.4, 0.7])
    summary = pd.DataFrame({"dataset": "d", "system": "s", "variant": "main", "metric": "ndcg@10",
                            "budget_param": "beam", "budget_value": [1.0, 2, 3, 4], "frac_visited": frac,
                            "value": value})
    kmr = kmr_table(summary, targets=(0.005, 0.035, 0.05)).value.tolist()
    assert np.isnan(kmr[0]) and kmr[1:] == [0.4, 0.5]
    assert score_curve(frac, value, targets=(0.005, 0.035, 0.05)) == (0.0 + 0.4 + 0.5) / 3
