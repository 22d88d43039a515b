"""ehi.search.partition: a partitioner's lists and centroids are checked where they enter, each
fault refused in one line naming the partitioner (a NaN centroid used to give an empty run)."""

import re
import sys

import numpy as np
import pytest

from ehi.core.plugins import PluginError
from ehi.search.partition import PartitionSearcher

N, D, LISTS = 60, 8, 4


def balanced(emb, n_lists, seed):
    leaf = np.arange(len(emb)) % n_lists
    return leaf, np.stack([emb[leaf == i].mean(axis=0) for i in range(n_lists)]).astype(np.float32)


def _with(fault):
    def partitioner(emb, n_lists, seed):
        leaf, centroids = balanced(emb, n_lists, seed)
        return fault(leaf, centroids)
    return partitioner


FAULTS = {
    "nan centroid": (lambda leaf, c: (leaf, np.where(np.arange(len(c))[:, None] == 1, np.nan, c)), "centroid 1"),
    "inf centroid": (lambda leaf, c: (leaf, np.where(np.arange(len(c))[:, None] == 2, np.inf, c)), "centroid 2"),
    "beyond float32": (lambda leaf, c: (leaf, c.astype(np.float64) * 1e300), "NaN or infinite"),
    "a list too many": (lambda leaf, c: (leaf + 1, c), "list ids 1..4; expected 0..3"),
    "a negative list": (lambda leaf, c: (leaf - 1, c), "expected 0..3"),
    "float lists": (lambda leaf, c: (leaf.astype(float), c), "expected (60,) integers"),
    "lists of a subset": (lambda leaf, c: (leaf[:10], c), "lists of shape (10,)"),
    "centroids of another width": (lambda leaf, c: (leaf, c[:, :3]), "expected (4, 8) floats"),
    "too few centroids": (lambda leaf, c: (leaf, c[:2]), "expected (4, 8) floats"),
    "one value": (lambda leaf, c: leaf, "not (list of each document, centroids)"),
}


@pytest.mark.parametrize("fault", FAULTS, ids=list(FAULTS))
def test_a_faulty_partition_is_refused_in_one_line(monkeypatch, fault):
    make, says = FAULTS[fault]
    monkeypatch.setattr(sys.modules[__name__], "faulty", _with(make), raising=False)
    emb = np.random.default_rng(0).standard_normal((N, D)).astype(np.float32)
    with pytest.raises(PluginError, match=re.escape(says)) as err:
        PartitionSearcher.build(emb, f"{__name__}:faulty", nlist=LISTS)
    assert f"partitioner {__name__}:faulty" in str(err.value)


def test_a_partitioner_of_another_signature_is_named(monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "two_args", lambda emb, n_lists: balanced(emb, n_lists, 0), raising=False)
    emb = np.random.default_rng(0).standard_normal((N, D)).astype(np.float32)
    with pytest.raises(PluginError, match=rf"partitioner {__name__}:two_args: cannot be called as f\(emb, n_lists, seed\)"):
        PartitionSearcher.build(emb, f"{__name__}:two_args", nlist=LISTS)


def test_a_sound_partition_searches_every_document_at_full_budget():
    emb = np.random.default_rng(0).standard_normal((N, D)).astype(np.float32)
    searcher = PartitionSearcher.build(emb, f"{__name__}:balanced", nlist=LISTS)
    rows, _, n_scored = searcher.search(emb[:5], 3, LISTS)
    assert (n_scored == N).all() and (rows[:, 0] == np.argmax(emb[:5] @ emb.T, axis=1)).all()  # exact search
