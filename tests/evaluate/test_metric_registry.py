"""ehi.evaluate.metric_registry: registered families (psp) beside ranx's metrics."""

import pytest

from ehi.evaluate.metric_registry import Metric, needs, ranx_names, register_metric, registered


def test_registered_families_compute_their_names_and_the_rest_goes_to_ranx():
    names = ["ndcg@10", "psp@1", "recall@100", "psp@5", "precision@3", "map@10", "r-precision"]
    assert registered(names) == {"ndcg": ["ndcg@10"], "psp": ["psp@1", "psp@5"], "recall": ["recall@100"],
                                 "precision": ["precision@3"]}
    assert ranx_names(names) == ["map@10", "r-precision"]
    assert needs(names, "inv_prop") and not needs(["ndcg@10"], "inv_prop")


def test_a_taken_family_is_refused():
    with pytest.raises(ValueError, match="already registered"):
        register_metric(Metric("psp", lambda ctx, ks: None))
