"""ehi.evaluate.sweep: one system at every budget, with typed search settings."""

import numpy as np
import pytest
import torch

from ehi.evaluate.sweep import search_system, split_rows
from ehi.search.tree_search import beam_grid
from ehi.model.tree import TreeIndexer
from ehi.search.config import SearchConfig
from ehi.search.tree_index import EHIIndex


@pytest.fixture(scope="module")
def embeddings(tiny_dataset):
    rng = np.random.default_rng(3)
    def unit(n):
        x = rng.standard_normal((n, 16)).astype(np.float32)
        return x / np.linalg.norm(x, axis=1, keepdims=True)
    return unit(len(tiny_dataset.corpus)), unit(len(tiny_dataset.queries))


def test_split_rows_are_the_judged_queries_of_the_split(tiny_dataset):
    rows = split_rows(tiny_dataset, "test")
    queries = tiny_dataset.queries.iloc[rows]
    assert (queries.split == "test").all() and len(rows) > 0
    judged = set(tiny_dataset.qrels[(tiny_dataset.qrels.split == "test") & (tiny_dataset.qrels.relevance > 0)].query_id)
    assert set(queries.query_id) == judged & set(tiny_dataset.queries[tiny_dataset.queries.split == "test"].query_id)
    with pytest.raises(ValueError, match="no judged queries in split 'nope'"):
        split_rows(tiny_dataset, "nope")


def test_beam_grid_configured_default_and_out_of_range():
    assert beam_grid(16, [4, 1, 4]) == [1, 4]
    grid = beam_grid(16)
    assert grid[0] == 1 and grid[-1] == 16 and grid == sorted(set(grid))
    with pytest.raises(ValueError, match=r"ehi_beams \[17\] out of range"):
        beam_grid(16, [2, 17])


def test_exact_and_full_probe_ivf_return_the_same_run(tiny_dataset, embeddings):
    docs, queries = embeddings
    settings = SearchConfig(k=10, ivf_nlist=[4], budget_cost="work")
    exact, exact_qps = search_system("de+exact", "main", tiny_dataset, docs, queries, "test", settings)
    ivf, _ = search_system("de+faiss-ivf", "main", tiny_dataset, docs, queries, "test", settings)
    assert len(exact_qps) == 1 and exact.budget_param.unique().tolist() == ["exact"]
    assert ivf.budget_value.max() == 4  # the sweep of the one configured build: nprobe 1..nlist
    full = ivf[ivf.budget_value == 4].reset_index(drop=True)
    assert full.doc_id.tolist() == exact.doc_id.tolist() and (full.n_scored == len(docs)).all()
    cheap = ivf[ivf.budget_value == 1]
    assert (cheap.n_scored < len(docs)).all()
    assert (ivf.n_routed == 4).all() and (exact.n_routed == 0).all()  # 4 centroids a query; exact routes nothing
    # a plain dict is read as the same typed settings
    again, _ = search_system("de+exact", "main", tiny_dataset, docs, queries, "test", {"k": 10})
    assert again.doc_id.tolist() == exact.doc_id.tolist()
    assert again.n_routed.isna().all()  # the default cost counts no routing


def test_ehi_tree_at_its_full_beam_is_exact_search(tiny_dataset, embeddings, tmp_path):
    docs, queries = embeddings
    torch.manual_seed(0)
    EHIIndex.build(docs, TreeIndexer(dim=16, height=1, branching=4)).save(tmp_path / "index")
    settings = SearchConfig(k=10, ehi_beams=[1, 4], budget_cost="work")
    tree, qps = search_system("ehi+tree", "main", tiny_dataset, docs, queries, "test", settings, tmp_path / "index")
    exact, _ = search_system("ehi+exact", "main", tiny_dataset, docs, queries, "test", settings)
    assert sorted(tree.budget_value.unique()) == [1.0, 4.0] and set(qps.budget_param) == {"beam"}
    full = tree[tree.budget_value == 4]
    assert full.doc_id.tolist() == exact.doc_id.tolist()
    assert (tree[tree.budget_value == 1].n_scored <= len(docs)).all()
    assert (tree.n_routed == 4).all()  # one level of 4 leaf centroids, whatever the beam


def test_max_frac_stops_the_sweep_one_budget_past_it(tiny_dataset, embeddings):
    docs, queries = embeddings
    whole, _ = search_system("de+faiss-ivf", "main", tiny_dataset, docs, queries, "test",
                             SearchConfig(k=10, ivf_nlist=[8], budget_cost="work"))
    cut, qps = search_system("de+faiss-ivf", "main", tiny_dataset, docs, queries, "test",
                             SearchConfig(k=10, ivf_nlist=[8], budget_cost="work", max_frac=0.3))
    work = (cut.groupby("budget_value").n_scored.mean() + 8) / len(docs)  # documents + 8 centroids
    assert work.iloc[-1] > 0.3 and (work.iloc[:-1] <= 0.3).all()  # the first budget past it, then no more
    assert cut.budget_value.max() < whole.budget_value.max() and len(qps) == cut.budget_value.nunique()
    same = whole[whole.budget_value.isin(cut.budget_value.unique())].reset_index(drop=True)
    assert same.doc_id.tolist() == cut.doc_id.tolist()  # the budgets kept are searched as before
