"""ehi.search.registry: one entry per ANNS kind, read by tuning, the search rule and the figures."""

import subprocess
import sys

import numpy as np
import pytest

from ehi.search import registry
from ehi.search.config import SearchConfig
from ehi.search.registry import (KINDS, AnnKind, ann_kind, build_searcher, check_systems,
                                 register_kind, rule_settings)
from ehi.search.tune import default_grid, neighbor_recall

SEARCH = SearchConfig().to_dict()


def test_importing_the_registry_loads_no_heavy_library():
    # the Snakefile imports it to constrain the system wildcard
    code = ("import sys, ehi.search.registry as r; r.system_pattern(); "
            "print(sorted(m for m in ('torch', 'faiss', 'scann', 'matplotlib', 'pandas') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_rule_settings_are_the_keys_a_system_reads_sorted():
    hnsw = rule_settings(SEARCH, "de+faiss-hnsw")
    assert list(hnsw) == sorted(hnsw)
    assert set(hnsw) == {"k", "batch_size", "threads", "tune_split", "hnsw_M", "hnsw_ef_construction"}
    assert set(rule_settings(SEARCH, "de+exact")) == {"k", "batch_size", "threads"}
    assert set(rule_settings(SEARCH, "ehi+tree")) == {"k", "batch_size", "threads", "ehi_beams"}
    # a change to hnsw_M changes the HNSW searches' params only
    changed = {**SEARCH, "hnsw_M": [8]}
    for system in ("de+faiss-ivf", "ehi+tree", "de+scann", "de+scann-ah", "pre+exact"):
        assert rule_settings(changed, system) == rule_settings(SEARCH, system), system
    assert rule_settings(changed, "ehi+faiss-hnsw") != rule_settings(SEARCH, "ehi+faiss-hnsw")
    # key order never matters
    assert repr(rule_settings(dict(reversed(list(SEARCH.items()))), "de+scann")) == repr(rule_settings(SEARCH, "de+scann"))


def test_grids_come_from_the_entries_and_the_config_narrows_them():
    assert default_grid("exact", 100) == [{}]
    assert default_grid("faiss-ivf", 100) == [{"nlist": n} for n in (5, 10, 20, 40)]
    assert len(default_grid("faiss-hnsw", 100)) == 4
    assert default_grid("scann-ah", 100)[:2] == [{"num_leaves": 5, "reorder_k": 0}, {"num_leaves": 5, "reorder_k": 1000}]
    s = SearchConfig(ivf_nlist=[7], hnsw_M=[8], hnsw_ef_construction=50, scann_leaves=[3])
    assert default_grid("faiss-ivf", 100, s) == [{"nlist": 7}]
    assert default_grid("faiss-hnsw", 100, s) == [{"M": 8, "ef_construction": 50}]
    assert default_grid("scann-ah", 100, s) == [{"num_leaves": 3, "reorder_k": 0}, {"num_leaves": 3, "reorder_k": 1000}]


def test_entries_name_their_searcher_and_shard_builder():
    for kind in KINDS:
        assert ann_kind(kind).searcher_class().__name__.endswith("Searcher")
    assert ann_kind("scann").shard_builder() is None and callable(ann_kind("faiss-ivf").shard_builder())
    emb = np.random.default_rng(0).standard_normal((64, 8)).astype(np.float32)
    assert build_searcher("scann-ah", emb, num_leaves=2).params["scoring"] == "ah"  # the entry's fixed keyword


def test_registration_refuses_taken_and_bad_names_and_unknown_systems():
    with pytest.raises(ValueError, match="already registered"):
        register_kind(AnnKind("faiss-ivf", "x:Y", lambda n, s: [{}]))
    with pytest.raises(ValueError, match="already registered"):
        register_kind(AnnKind("tree", "x:Y", lambda n, s: [{}]))
    with pytest.raises(ValueError, match="lower-case"):
        register_kind(AnnKind("Bad Name", "x:Y", lambda n, s: [{}]))
    assert "Bad Name" not in registry._REGISTRY
    with pytest.raises(ValueError, match=r"ablation_systems.*pre\+exact"):
        check_systems(["pre+exact"], "ablation_systems", encoders=("de", "ehi"))
    with pytest.raises(ValueError, match="unknown ANNS kind 'nope'"):
        build_searcher("nope", np.eye(4, dtype=np.float32))


def test_neighbor_recall_is_faiss_knn_intersection_measure_without_padding():
    from faiss.contrib.evaluation import knn_intersection_measure

    rng = np.random.default_rng(0)
    truth = np.stack([rng.permutation(50)[:10] for _ in range(20)])
    found = np.stack([rng.permutation(50)[:10] for _ in range(20)])
    assert neighbor_recall(found, truth).mean() == pytest.approx(knn_intersection_measure(found, truth))
    padded = found.copy()
    padded[:, 5:] = -1  # a short list: faiss's measure would not treat -1 as "no result" here
    truth_padded = truth.copy()
    truth_padded[:, 8:] = -1
    assert neighbor_recall(padded, truth_padded).mean() <= knn_intersection_measure(padded, truth_padded)
