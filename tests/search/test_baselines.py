"""ANNS baselines against exact search, and their budget accounting against what the library did."""

import faiss
import numpy as np
import pytest

from ehi.search.registry import KINDS, build_searcher, load_searcher
from ehi.search.tune import tune_on_dev
from ehi.search.tune import neighbor_recall, score_curve
from tests.search.vectors import clustered

N_DOCS, DIM, K = 2000, 32, 10


@pytest.fixture(scope="module")
def toy():
    """2000 x 32 unit vectors around 64 seeded cluster centres, and 100 queries from the same mixture."""
    return clustered(np.random.default_rng(7), N_DOCS, 100, DIM, n_topics=64, doc_noise=0.6, query_noise=0.6)


@pytest.fixture(scope="module")
def searchers(toy):
    # AH re-scores only its 100 best candidates exactly (10 x k): full budget must still be exact;
    # IVF-PQ and the PQ control of the tree re-score every candidate, so their full budget is exact too
    params = {"scann-ah": {"reorder_k": 100}, "faiss-ivfpq": {"rerank": N_DOCS}, "ivf-lists-pq": {"rerank": N_DOCS}}
    return {kind: build_searcher(kind, toy[0], **params.get(kind, {})) for kind in KINDS}


@pytest.fixture(scope="module")
def exact(toy):
    docs, queries = toy
    return np.argsort(-(queries @ docs.T), axis=1)[:, :K]  # numpy, independent of faiss


@pytest.mark.parametrize("kind", KINDS)
def test_full_budget_equals_exact_search(kind, searchers, toy, exact):
    searcher = searchers[kind]
    rows, scores, n_scored = searcher.search(toy[1], K, searcher.full_budget)
    np.testing.assert_array_equal(rows, exact)
    assert np.all(np.diff(scores, axis=1) <= 1e-6)  # best first
    assert n_scored.shape == (len(toy[1]),) and n_scored.dtype == np.int64
    assert np.all(n_scored <= N_DOCS) and n_scored.mean() >= 0.95 * N_DOCS


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "exact"])
def test_budget_rises_along_the_sweep_and_reaches_low_fractions(kind, searchers, toy):
    searcher = searchers[kind]
    sweep = searcher.default_sweep()
    fracs = [searcher.search(toy[1], K, b)[2].mean() / N_DOCS for b in sweep]
    assert np.all(np.diff(fracs) >= 0), fracs
    # one level-0 hop of HNSW (M=32) alone scores 2M = 64 documents, 3.2 % of this toy corpus
    assert fracs[0] <= (0.06 if kind == "faiss-hnsw" else 0.05) and fracs[-1] >= 0.95, fracs
    assert sweep == sorted(set(sweep)) and len(sweep) >= 8


def test_ivf_counts_exactly_the_probed_lists(searchers, toy):
    ivf = searchers["faiss-ivf"]
    invlists = ivf.index.invlists
    members = {lst: set(faiss.rev_swig_ptr(invlists.get_ids(lst), invlists.list_size(lst)).tolist())
               for lst in range(ivf.index.nlist)}
    _, lists = ivf.quantizer.search(toy[1], 3)
    rows, _, n_scored = ivf.search(toy[1], K, 3)
    for q in range(len(rows)):
        probed = set().union(*(members[lst] for lst in lists[q]))
        assert n_scored[q] == len(probed)
        assert set(rows[q][rows[q] >= 0].tolist()) <= probed


def test_hnsw_per_query_counts_add_up_to_the_batch_statistic(searchers, toy):
    hnsw = searchers["faiss-hnsw"]
    _, _, n_scored = hnsw.search(toy[1], K, 32)
    faiss.cvar.hnsw_stats.reset()
    hnsw.index.hnsw.efSearch = 32
    hnsw.index.search(toy[1], K)
    assert n_scored.sum() == faiss.cvar.hnsw_stats.ndis
    assert n_scored.std() > 0  # per query, not a batch average


def test_hnsw_returns_at_most_ef_results(searchers, toy):
    rows, scores, _ = searchers["faiss-hnsw"].search(toy[1], K, 4)
    assert np.all(rows[:, :4] >= 0) and np.all(rows[:, 4:] == -1) and np.all(np.isneginf(scores[:, 4:]))


@pytest.mark.parametrize("kind", ["scann", "scann-ah"])
def test_scann_results_lie_in_the_replayed_partitions(kind, searchers, toy):
    scann_s = searchers[kind]
    for leaves in (1, 3, 8):
        rows, _, _ = scann_s.search(toy[1], K, leaves)
        searched = scann_s.searched_leaves(toy[1], leaves)
        for q in range(len(rows)):
            assert set(scann_s.doc_leaf[rows[q][rows[q] >= 0]].tolist()) <= set(searched[q].tolist())


def test_scann_replayed_count_matches_what_scann_scored(searchers, toy):
    """Asking brute-force scann for every candidate returns exactly the documents it scored."""
    scann_s = searchers["scann"]
    for leaves in (1, 4):
        _, _, n_scored = scann_s.search(toy[1], K, leaves)
        _, scores = scann_s.searcher.search_batched(toy[1], leaves_to_search=leaves, final_num_neighbors=N_DOCS)
        np.testing.assert_array_equal((~np.isnan(scores)).sum(1), n_scored)


@pytest.mark.parametrize("kind", ["faiss-ivf", "faiss-hnsw", "scann"])
def test_save_and_load_give_the_same_results(kind, searchers, toy, tmp_path):
    searcher = searchers[kind]
    loaded = load_searcher(searcher.save(tmp_path / kind))
    budget = searcher.default_sweep()[2]
    for a, b in zip(searcher.search(toy[1], K, budget), loaded.search(toy[1], K, budget)):
        np.testing.assert_array_equal(a, b)


def test_tune_on_dev_picks_the_best_scoring_candidate(toy):
    best, curves = tune_on_dev("faiss-ivf", toy[0], toy[1][:50], grid=[{"nlist": 8}, {"nlist": 45}])
    scores = curves.groupby("params").score.first()
    assert best == {"nlist": 45} and scores.max() == scores['{"nlist": 45}']
    assert set(curves.columns) >= {"params", "budget_param", "budget_value", "frac_visited", "recall", "score"}


def test_tuning_helpers_on_hand_cases():
    truth = np.array([[1, 2, 3, 4], [5, 6, 7, 8]])
    rows = np.array([[4, 3, 9, -1], [-1, -1, -1, -1]])
    np.testing.assert_allclose(neighbor_recall(rows, truth), [0.5, 0.0])
    # targets 0.01: no point (0); 0.1: point at 0.08 -> 0.6; 0.5: point at 0.5 -> 0.9
    assert score_curve([0.08, 0.5, 0.9], [0.6, 0.9, 1.0], targets=(0.01, 0.1, 0.5)) == pytest.approx(0.5)


@pytest.mark.parametrize("kind", ["scann", "scann-ah"])
def test_scann_builds_are_identical_build_to_build(kind, toy):
    """Two builds on the same vectors: the same partition labels, bit-identical centres and the
    same results. Fails with the builder's random initialisation, which ignores the seed."""
    first, second = (build_searcher(kind, toy[0], num_leaves=45) for _ in range(2))
    np.testing.assert_array_equal(first.doc_leaf, second.doc_leaf)
    assert first.centers.tobytes() == second.centers.tobytes()
    for a, b in zip(first.search(toy[1], K, 3), second.search(toy[1], K, 3)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("kind", KINDS)
def test_each_faiss_index_is_recorded_by_its_factory_string(kind, searchers):
    """Every FAISS index names itself as FAISS would build it again (reverse_index_factory): the
    string is recorded with its runs, and building it gives an index of the same structure."""
    spelled = searchers[kind].faiss_index()
    if kind.startswith("scann"):
        assert spelled is None  # no FAISS index
        return
    assert spelled, kind
    rebuilt = faiss.index_factory(DIM, spelled, faiss.METRIC_INNER_PRODUCT)
    from faiss.contrib.factory_tools import reverse_index_factory

    assert reverse_index_factory(rebuilt) == spelled
