"""Issue 16's compressed searches in the registry: faiss-ivfpq an AnnKind, tree-pq a tree search."""

from ehi.search.config import SearchConfig
from ehi.search.registry import ann_kind, check_systems, rule_settings, searches


def test_ivfpq_grid_combines_lists_with_the_configured_codes():
    grid = ann_kind("faiss-ivfpq").grid(400, SearchConfig(ivf_nlist=[8, 16], pq_m=4, pq_nbits=8, pq_rerank=0))
    assert grid == [{"nlist": n, "m": 4, "nbits": 8, "rerank": 0} for n in (8, 16)]
    # null pq_m: left to the build, which knows the dimension
    assert all("m" not in g and g["nbits"] == 4 and g["rerank"] == 1000 for g in ann_kind("faiss-ivfpq").grid(400, None))


def test_pq_defaults_are_search_config_defaults():
    from ehi.search.faiss_pq import PQ_SETTINGS

    assert PQ_SETTINGS == {k: getattr(SearchConfig(), k) for k in PQ_SETTINGS}


def test_tree_pq_is_a_search_with_its_rule_params():
    assert "tree-pq" in searches() and ann_kind("tree-pq").from_index
    check_systems(["ehi+tree-pq", "de+faiss-ivfpq"])
    section = {**vars(SearchConfig()), "hnsw_M": [4]}
    assert set(rule_settings(section, "ehi+tree-pq")) == {"k", "batch_size", "threads", "ehi_beams",
                                                         "pq_m", "pq_nbits", "pq_rerank"}
    assert set(rule_settings(section, "de+faiss-ivfpq")) == {"k", "batch_size", "threads", "tune_split",
                                                            "ivf_nlist", "pq_m", "pq_nbits", "pq_rerank"}
