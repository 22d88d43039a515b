"""The compressed-leaf systems through the pipeline's search step (ehi+tree-pq, {de,ehi}+faiss-ivfpq).

They are not in the test config (its results are a golden digest), so they are checked here: with
every candidate re-ranked exactly, each must return its float32 counterpart's run, at the same
budgets and documents scored; with codes only, it must stay close but not identical.
"""

import numpy as np
import pytest
import torch

from ehi.data.synthetic import SyntheticConfig, generate
from ehi.evaluate.sweep import search_system
from ehi.model.tree import TreeIndexer
from ehi.search.tree_index import EHIIndex

DIM = 16
COLUMNS = ["query_id", "doc_id", "rank", "budget_param", "budget_value", "n_scored"]


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    dataset = generate(SyntheticConfig(n_docs=400, n_queries=150, n_topics=2, n_subtopics=4))
    rng = np.random.default_rng(0)
    unit = lambda n: (lambda x: x / np.linalg.norm(x, axis=1, keepdims=True))(  # noqa: E731
        rng.standard_normal((n, DIM)).astype(np.float32))
    corpus, queries = unit(len(dataset.corpus)), unit(len(dataset.queries))
    torch.manual_seed(0)
    index_dir = EHIIndex.build(corpus, TreeIndexer(DIM, 2, 4).standardize_(corpus)).save(
        tmp_path_factory.mktemp("ehi") / "index")
    settings = {"k": 20, "batch_size": 64, "threads": 1, "tune_split": "dev", "ehi_beams": None,
                "ivf_nlist": [16], "hnsw_M": [8], "hnsw_ef_construction": 40, "scann_leaves": None,
                "pq_m": None, "pq_nbits": 4, "pq_rerank": 400}
    return dataset, corpus, queries, index_dir, settings


def _run(setup, system, **overrides):
    dataset, corpus, queries, index_dir, settings = setup
    run, qps = search_system(system, "main", dataset, corpus, queries, "test", {**settings, **overrides},
                             index_dir=index_dir)
    assert (qps.qps > 0).all() and set(qps.system) == {system}
    return run.sort_values(["budget_value", "query_id", "rank"]).reset_index(drop=True)


@pytest.mark.parametrize("system,reference", [("ehi+tree-pq", "ehi+tree"), ("de+faiss-ivfpq", "de+faiss-ivf")])
def test_every_candidate_reranked_returns_the_float_run(setup, system, reference):
    want, got = _run(setup, reference), _run(setup, system)
    assert (got.system == system).all()
    np.testing.assert_array_equal(got[COLUMNS].to_numpy(), want[COLUMNS].to_numpy())
    np.testing.assert_allclose(got.score, want.score, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("nbits", [4, 8])
def test_codes_alone_approximate_the_float_run(setup, nbits):
    want, got = _run(setup, "ehi+tree"), _run(setup, "ehi+tree-pq", pq_rerank=0, pq_nbits=nbits)
    np.testing.assert_array_equal(got[["budget_value", "n_scored"]].drop_duplicates().to_numpy(),
                                  want[["budget_value", "n_scored"]].drop_duplicates().to_numpy())
    full = want.budget_value.max()
    same = len(set(zip(*got[got.budget_value == full][["query_id", "doc_id"]].to_numpy().T))
               & set(zip(*want[want.budget_value == full][["query_id", "doc_id"]].to_numpy().T)))
    assert 0.3 * (want.budget_value == full).sum() < same < (want.budget_value == full).sum()
