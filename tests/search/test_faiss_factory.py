"""ehi.search.factory_kinds and ehi.search.faiss_factory: a FAISS baseline from its index_factory
string, its budget knob read from the built index, its placeholders tuned on dev, and the pipeline's
own search and evaluation run on one (config/test/faiss_factory.yaml)."""

import os
import subprocess
import sys
from pathlib import Path

import faiss
import numpy as np
import pandas as pd
import pytest

from ehi.core.errors import ConfigError
from ehi.search import factory_kinds, registry
from ehi.search.faiss_ann import FlatSearcher
from ehi.search.faiss_factory import FactorySearcher

REPO = Path(__file__).resolve().parents[2]
OPQ = "OPQ16,IVF{nlist},PQ16x4fs,RFlat"
SYSTEM = "de+opq-ivfpq"


def unit(n, d=32, seed=0):
    x = np.random.default_rng(seed).standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.fixture
def factories(monkeypatch):
    """Register factories in this process for one test; the registry and the environment restored."""
    monkeypatch.setenv(factory_kinds.ENV, "")  # undone afterwards, whatever the registration exported
    before = dict(registry._REGISTRY)
    yield factory_kinds.register_factories
    registry._REGISTRY.clear()
    registry._REGISTRY.update(before)
    factory_kinds._loaded[0] = ""


@pytest.mark.parametrize("factory, knob", [("IVF{nlist},Flat", "nprobe"), ("OPQ16,IVF{nlist},PQ16x4fs,RFlat", "nprobe"),
                                           ("PCA16,IVF{nlist},SQ8", "nprobe"), ("HNSW{M}", "efSearch"), ("Flat", "exact")])
def test_the_budget_knob_is_read_from_the_built_index(factory, knob):
    docs, queries = unit(600), unit(20, seed=1)
    s = FactorySearcher.build(docs, factory, nlist=8, M=8, rerank=50)
    assert s.budget_param == knob and s.params["factory"] == factory
    sweep = s.default_sweep()
    rows, scores, n_scored = s.search(queries, 10, sweep[0])
    assert rows.shape == (20, 10) and (n_scored <= len(docs)).all()
    assert (s.search_ids(queries, 10, sweep[0])[0] == rows).all()
    if knob == "nprobe":  # the probed lists' sizes: what FAISS itself counts as scanned
        counted = s.search(queries, 10, 3)[2].sum()
        faiss.cvar.indexIVF_stats.reset()
        s.search_ids(queries, 10, 3)
        assert counted == faiss.cvar.indexIVF_stats.ndis
        assert s.routing_units(3) == 8 and (s.search(queries, 10, sweep[-1])[2] == len(docs)).all()


def test_a_full_probe_of_an_exact_ivf_and_a_refined_one_find_the_exact_neighbours():
    docs, queries = unit(600), unit(20, seed=1)
    exact, _, _ = FlatSearcher.build(docs).search(queries, 10)
    assert (FactorySearcher.build(docs, "IVF{nlist},Flat", nlist=8).search(queries, 10, 8)[0] == exact).all()
    refined = FactorySearcher.build(docs, OPQ, nlist=8, rerank=100).search(queries, 10, 8)[0]
    codes_only = FactorySearcher.build(docs, OPQ, nlist=8).search(queries, 10, 8)[0]
    overlap = lambda rows: np.mean([len(set(a) & set(b)) for a, b in zip(rows, exact)]) / 10  # noqa: E731
    assert overlap(refined) > overlap(codes_only) and overlap(refined) >= 0.95


def test_a_factory_that_faiss_refuses_names_the_kind_and_the_string():
    with pytest.raises(ValueError, match=r"opq: FAISS cannot train 'OPQ7,IVF4,Flat' on 300 documents: .*multiple"):
        FactorySearcher.build(unit(300), "OPQ7,IVF{nlist},Flat", nlist=4, kind="opq")
    with pytest.raises(ValueError, match=r"sq: FAISS cannot build 'IVF4,SQ5'"):
        FactorySearcher.build(unit(300), "IVF{nlist},SQ5", nlist=4, kind="sq")


@pytest.mark.parametrize("factory, dim, says", [
    ("Foo", 32, "could not parse index string Foo"), ("IVF{nlist},Fl@t", None, "could not parse code description"),
    ("IVF{nlist},PQ7", 32, "multiple of the number of subquantizers"), ("LSH", 32, "METRIC_L2"),
    ("HNSW{nlist}", None, "not an IVF's list count"), ("PQ{nlist}", 34, "not an IVF's list count"),
    ("NSG32,Flat", 32, "IndexNSGFlat is a graph whose budget is not counted"),  # was counted as N scored
    ("IDMap,Flat", 32, "adds documents by position"), ("PCA64,IVF{nlist},Flat", 32, "PCA to 64 dimensions of 32"),
])
def test_a_factory_faiss_cannot_build_or_whose_nlist_is_no_ivf_is_refused_naming_the_key(factory, dim, says):
    """What the search job would have failed on after training, refused while the Snakefile is parsed."""
    with pytest.raises(ConfigError, match=rf"^config search\.faiss_factories\.mine: .*{says}"):
        factory_kinds.check_factories({"mine": factory}, dim)


def test_a_factory_is_checked_over_the_data_width_where_known_and_over_several_where_not():
    factory_kinds.check_factories({"pq7": "IVF{nlist},PQ7", "opq": OPQ, "hnsw": "HNSW{M},Flat"}, None)
    factory_kinds.check_factories({"pq7": "IVF{nlist},PQ7"}, 56)
    with pytest.raises(ConfigError, match="over the embeddings' 384 dimensions"):
        factory_kinds.check_factories({"pq7": "IVF{nlist},PQ7"}, 384)


def test_an_exhaustive_factory_is_no_budgeted_search(factories):
    """The ablation tables read a budgeted search at a fraction of work, an exhaustive one at 1.0."""
    factories({"flat-f": "Flat", "ivf-f": "IVF{nlist},Flat", "hnsw-f": "HNSW{M}"})
    assert [registry.budgeted(f"ehi+{k}") for k in ("flat-f", "ivf-f", "hnsw-f", "exact", "tree")] == \
        [False, True, True, False, True]


def test_factories_register_as_ordinary_kinds_with_their_own_params(factories):
    factories({"opq-ivfpq": OPQ, "hnsw-sq": "HNSW{M},SQ8"})
    factories({"opq-ivfpq": OPQ})  # the same string again: nothing
    registry.check_systems([SYSTEM, "ehi+hnsw-sq"])
    section = {"faiss_factories": {"opq-ivfpq": OPQ, "hnsw-sq": "HNSW{M},SQ8"}, "ivf_nlist": [4], "hnsw_M": [8],
               "pq_rerank": 20, "k": 10}
    assert registry.rule_settings(section, SYSTEM) == {"faiss_factories": {"opq-ivfpq": OPQ}, "ivf_nlist": [4],
                                                       "k": 10, "pq_rerank": 20}
    assert registry.rule_settings(section, "de+hnsw-sq") == {"faiss_factories": {"hnsw-sq": "HNSW{M},SQ8"},
                                                             "hnsw_M": [8], "k": 10}
    assert "faiss_factories" not in registry.rule_settings(section, "de+faiss-ivf")
    assert os.environ[factory_kinds.ENV]  # exported to the jobs the Snakefile starts
    with pytest.raises(ConfigError, match="already a search"):
        factories({"opq-ivfpq": "IVF{nlist},Flat"})
    with pytest.raises(ConfigError, match="already a search"):
        factories({"faiss-ivf": "IVF{nlist},Flat"})
    with pytest.raises(ConfigError, match=r"placeholder\(s\) \['nprobe'\]"):
        factories({"bad": "IVF{nprobe},Flat"})


def test_the_sweep_tunes_the_placeholder_on_dev_and_the_run_is_evaluated(factories):
    from ehi.data.synthetic import SyntheticConfig, generate
    from ehi.evaluate.metrics import per_query_metrics
    from ehi.evaluate.sweep import search_system
    from ehi.search.config import SearchConfig

    factories({"opq-ivfpq": OPQ})
    dataset = generate(SyntheticConfig(n_docs=300, n_queries=60, n_topics=2, n_subtopics=4))
    docs, queries = unit(len(dataset.corpus)), unit(len(dataset.queries), seed=1)
    settings = SearchConfig(k=10, ivf_nlist=[4, 8], pq_rerank=20, budget_cost="work",
                            faiss_factories={"opq-ivfpq": OPQ})
    run, qps = search_system(SYSTEM, "main", dataset, docs, queries, "test", settings)
    nlist = int(run.budget_value.max())
    assert nlist in (4, 8) and set(run.budget_param) == {"nprobe"} and (run.n_routed == nlist).all()
    assert len(qps) == run.budget_value.nunique() and (run[run.budget_value == nlist].n_scored == len(docs)).all()
    _, qrels = dataset.split("test")
    scores = per_query_metrics(run, qrels, "test", len(docs), ["ndcg@10", "recall@10"])
    assert set(scores.metric) == {"ndcg@10", "recall@10"} and scores.value.between(0, 1).all()


def test_the_pipeline_searches_and_evaluates_a_factory_system(tmp_path):
    """config/test/faiss_factory.yaml over the test config: the search job reads the factory the
    Snakefile exported, and the evaluate job scores its run."""
    target = "results/test/main/per_query/pre+opq-ivfpq.parquet"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    env.pop(factory_kinds.ENV, None)
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(tmp_path),
           "--cores", "1", target, "--configfile", str(REPO / "config" / "test" / "test.yaml"),
           str(REPO / "config" / "test" / "faiss_factory.yaml")]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    run = pd.read_parquet(tmp_path / "resources/test/main/runs/pre+opq-ivfpq.parquet")
    assert set(run.budget_param) == {"nprobe"} and int(run.budget_value.max()) in (4, 8)
    per_query = pd.read_parquet(tmp_path / target)
    assert {"ndcg@10", "recall@10"} <= set(per_query.metric) and per_query.value.between(0, 1).all()
