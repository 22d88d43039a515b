"""ehi.evaluate.metric_registry: registered families (psp) beside ranx's metrics."""

import pytest

from ehi.evaluate.metric_registry import Metric, needs, ranx_names, register_metric, registered


def test_psp_is_a_registered_family_and_the_rest_goes_to_ranx():
    names = ["ndcg@10", "psp@1", "recall@100", "psp@5", "precision@3"]
    assert registered(names) == {"psp": ["psp@1", "psp@5"]}
    assert ranx_names(names) == ["ndcg@10", "recall@100", "precision@3"]
    assert needs(names, "inv_prop") and not needs(["ndcg@10"], "inv_prop")


def test_a_taken_family_is_refused():
    with pytest.raises(ValueError, match="already registered"):
        register_metric(Metric("psp", lambda ctx, ks: None))
