"""ehi.search.ivf_lists: the tree's IVF control is FAISS-IVF's k-means lists, as many as the tree's
leaves, probed in IVF's order at the tree's beams and counted as IVF is; it ranks as the tree that
``train.indexer_init: ivf`` starts from."""

import numpy as np
import pytest

from ehi.core.ivf import IVF_SEED, ivf_centroids
from ehi.evaluate.sweep import search_system
from ehi.model.tree import TreeIndexer
from ehi.model.tree_init import kmeans_init_
from ehi.search.config import SearchConfig
from ehi.search.faiss_ann import IVFSearcher
from ehi.search.grids import tree_leaf_count, with_leaf_count_grid
from ehi.search.registry import ann_kind, build_searcher, load_searcher, rule_settings
from ehi.search.tree_index import EHIIndex
from ehi.search.tree_search import beam_grid
from tests.search.vectors import clustered, unit

N, D, LEAVES = 1200, 16, 24


@pytest.fixture(scope="module")
def world():
    return clustered(np.random.default_rng(7), N, 60, D, n_topics=12, doc_noise=0.6, query_noise=0.8)


def _same_points(a, b, queries, budgets, k=20):
    for budget in budgets:
        rows_a, scores_a, scored_a = a.search(queries, k, budget)
        rows_b, scores_b, scored_b = b.search(queries, k, budget)
        np.testing.assert_array_equal(scored_a, scored_b, err_msg=f"documents scored at {budget}")
        assert a.routing_units(budget) == b.routing_units(budget) == LEAVES
        np.testing.assert_allclose(scores_a, scores_b, rtol=1e-5, atol=1e-6)
        # equal scores may swap places; the sets of documents found are the same
        assert [set(r) for r in rows_a] == [set(r) for r in rows_b], f"documents found at {budget}"


def test_the_control_is_faiss_ivf_with_the_trees_leaf_count(world):
    docs, queries = world
    control = build_searcher("ivf-lists", docs, nlist=LEAVES)
    ivf = IVFSearcher.build(docs, nlist=LEAVES)
    assert np.array_equal(control.list_sizes, ivf.list_sizes)
    _same_points(control, ivf, queries, control.default_sweep())


def test_it_ranks_as_the_tree_started_from_ivfs_partition(world):
    """The study's former control: a one-level tree set to IVF's centroids (indexer_init: ivf) and
    never moved, searched by beam through its FAISS export."""
    docs, queries = world
    tree = kmeans_init_(TreeIndexer(dim=D, height=1, branching=LEAVES), docs, IVF_SEED, kmeans=ivf_centroids)
    old = EHIIndex.build(docs, tree).searcher()
    control = build_searcher("ivf-lists", docs, nlist=LEAVES)
    assert control.default_sweep() == beam_grid(LEAVES)  # the sweep of ehi+tree (tree_search.flat_tree_search)
    _same_points(control, old, queries, beam_grid(LEAVES))


def test_it_sweeps_the_trees_beams_and_is_saved_and_loaded(world, tmp_path):
    docs, queries = world
    control = build_searcher("ivf-lists", docs, nlist=LEAVES, beams=[4, 1, 2])
    assert control.default_sweep() == [1, 2, 4]
    loaded = load_searcher(control.save(tmp_path / "index"))
    assert loaded.default_sweep() == [1, 2, 4] and loaded.params == control.params
    _same_points(control, loaded, queries, [1, 4])


def test_its_one_list_count_is_the_trees_leaf_count():
    on = {**SearchConfig().to_dict(), "lists_from_leaf_count": True, "ehi_beams": [1, 8]}
    settings = rule_settings(on, "pre+ivf-lists", "auto")
    assert settings["tree_leaves"] == "auto" and "lists_from_leaf_count" not in settings and "ivf_nlist" not in settings
    assert "tree_leaves" not in rule_settings(on, "ehi+faiss-ivf", "auto")  # other kinds tune their own lists
    chosen = {"branching": 200, "grid": [50, 100, 200, 400]}
    resolved = SearchConfig.from_dict(with_leaf_count_grid(settings, chosen))
    assert ann_kind("ivf-lists").grid(10_000, resolved) == [{"nlist": 200, "beams": [1, 8]}]
    fixed = with_leaf_count_grid(rule_settings(on, "pre+ivf-lists", tree_leaf_count({"branching": 10, "height": 2})), {})
    assert fixed["ivf_nlist"] == [100]
    assert tree_leaf_count({"branching": "auto", "height": 1}) == "auto"


def test_a_search_builds_it_once_untuned_and_counts_routing_as_work(tiny_dataset):
    rng = np.random.default_rng(3)
    docs = unit(rng.standard_normal((len(tiny_dataset.corpus), D)))
    queries = unit(rng.standard_normal((len(tiny_dataset.queries), D)))
    settings = SearchConfig(k=10, ivf_nlist=[8], budget_cost="work", tune_split="test")  # nothing is tuned
    run, _ = search_system("pre+ivf-lists", "main", tiny_dataset, docs, queries, "test", settings)
    assert sorted(run.budget_value.unique()) == beam_grid(8)
    assert (run.n_routed == 8).all()
    assert run.attrs["index"] == {"nlist": 8, "faiss_index": "IVF8,Flat"}  # the run's metadata


def test_the_pq_control_scores_the_same_lists_by_tree_pqs_codes(world, tmp_path):
    """ivf-lists-pq: the k-means lists of ivf-lists, coded as tree-pq codes a tree started at IVF's
    partition (4-bit fast scan, no residuals); every candidate re-ranked it is the flat control, and
    it finds what that tree-pq finds: the two differ in the partition alone."""
    docs, queries = world
    flat = build_searcher("ivf-lists", docs, nlist=LEAVES)
    codes = {"m": D // 2, "nbits": 4}
    control = build_searcher("ivf-lists-pq", docs, nlist=LEAVES, rerank=N, **codes)
    assert control.name == "ivf-lists-pq" and control.params["scoring"] == "pq"
    _same_points(control, flat, queries, [1, 3, LEAVES])
    tree = kmeans_init_(TreeIndexer(dim=D, height=1, branching=LEAVES), docs, IVF_SEED, kmeans=ivf_centroids)
    tree_pq = EHIIndex.build(docs, tree).searcher(pq_m=codes["m"], nbits=4, rerank=N)
    _same_points(control, tree_pq, queries, [1, 3])
    coded = build_searcher("ivf-lists-pq", docs, nlist=LEAVES, **codes)  # codes alone: approximate
    overlap = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(coded.search(queries, 10, 3)[0],
                                                                  flat.search(queries, 10, 3)[0])])
    assert 0.3 < overlap < 1.0
    loaded = load_searcher(control.save(tmp_path / "pq"))
    assert loaded.name == "ivf-lists-pq"
    _same_points(control, loaded, queries, [2])


def test_the_pq_controls_settings_are_the_trees_leaf_count_and_codes():
    on = {**SearchConfig().to_dict(), "ehi_beams": [1, 4], "pq_rerank": 200}
    settings = rule_settings(on, "pre+ivf-lists-pq", 96)
    assert settings["tree_leaves"] == 96 and settings["pq_rerank"] == 200 and "pq_nbits" in settings
    resolved = SearchConfig.from_dict(with_leaf_count_grid(settings, {}))
    assert ann_kind("ivf-lists-pq").grid(10_000, resolved) == [{"nlist": 96, "beams": [1, 4], "nbits": 4,
                                                                  "rerank": 200}]
