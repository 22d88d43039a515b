"""Runs, per-query metrics (hand-computed and cross-checked with ir-measures), summaries, KMR tables."""

import math

import ir_measures
import numpy as np
import pandas as pd
import pytest

from ehi.search.registry import build_searcher
from ehi.evaluate.metrics import (capped_metrics, kmr_table, per_query_metrics, run_frame, summarize,
                          time_search, time_searcher)
from ehi.core.io import read_table, write_table


def _qrels(rows):
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"]).assign(split="test")


def _run(query_ids, ranked, system="de+exact", budget=1.0, n_scored=None):
    """A run frame from {query: [doc ids best first]} through run_frame, as a search would give it."""
    docs = sorted({d for q in ranked for d in ranked[q]})
    width = max(len(v) for v in ranked.values())
    rows = np.full((len(query_ids), width), -1)
    for i, q in enumerate(query_ids):
        rows[i, : len(ranked[q])] = [docs.index(d) for d in ranked[q]]
    scores = -np.arange(width, dtype=np.float32)[None].repeat(len(query_ids), 0)
    n_scored = np.full(len(query_ids), 10) if n_scored is None else n_scored
    return run_frame(query_ids, np.array(docs), rows, scores, system, "main", "exact", budget, n_scored)


def test_run_frame_drops_padding_and_ranks_from_one(tmp_path):
    rows = np.array([[2, 0, -1], [-1, -1, -1], [1, -1, -1]])
    scores = np.array([[0.9, 0.5, -np.inf], [-np.inf] * 3, [0.7, -np.inf, -np.inf]], dtype=np.float32)
    run = run_frame(["a", "b", "c"], np.array(["d0", "d1", "d2"]), rows, scores, "de+faiss-ivf", "main",
                    "nprobe", 4, np.array([30, 0, 12]))
    assert run.query_id.tolist() == ["a", "a", "c"] and run.doc_id.tolist() == ["d2", "d0", "d1"]
    assert run["rank"].tolist() == [1, 2, 1] and run.n_scored.tolist() == [30, 30, 12]
    back = read_table(write_table(run, "run", tmp_path / "run.parquet"), "run")
    pd.testing.assert_frame_equal(back, run, check_dtype=False)


def test_metrics_match_hand_computed_values():
    qrels = _qrels([("q1", "d1", 2), ("q1", "d2", 1), ("q2", "d4", 1), ("q3", "d9", 1)])
    run = _run(["q1", "q2"], {"q1": ["d3", "d1", "d2"], "q2": ["d4", "d5"]})  # q3 judged, not retrieved
    pq = per_query_metrics(run, qrels, "toy", corpus_size=100)
    got = pq.set_index(["query_id", "metric"]).value
    dcg = 2 / math.log2(3) + 1 / math.log2(4)
    idcg = 2 / math.log2(2) + 1 / math.log2(3)
    assert got["q1", "ndcg@10"] == pytest.approx(dcg / idcg)
    assert got["q1", "mrr@10"] == pytest.approx(0.5) and got["q1", "recall@10"] == pytest.approx(1.0)
    assert got["q2", "ndcg@10"] == pytest.approx(1.0) and got["q2", "mrr@10"] == pytest.approx(1.0)
    assert (got["q3"] == 0).all() and len(got["q3"]) == 5  # missing from the run: scores 0, kept
    frac = pq.set_index("query_id").frac_visited
    assert frac["q1"].iloc[0] == pytest.approx(0.1) and np.isnan(frac["q3"].iloc[0])


def test_cutoffs_are_capped_at_the_corpus_size_but_keep_their_names():
    assert capped_metrics(["ndcg@10", "recall@1000"], 500) == {"ndcg@10": "ndcg@10", "recall@1000": "recall@500"}
    qrels = _qrels([("q1", "d1", 1), ("q1", "d2", 1)])
    run = _run(["q1"], {"q1": ["d3", "d1", "d2"]})
    pq = per_query_metrics(run, qrels, "toy", corpus_size=2, metrics=("recall@10",))
    assert pq.metric.tolist() == ["recall@10"] and pq.value.tolist() == [pytest.approx(0.5)]


def test_ties_keep_the_searchers_order():
    qrels = _qrels([("q1", "d2", 1)])
    rows, scores = np.array([[0, 1]]), np.array([[0.5, 0.5]], dtype=np.float32)  # d1 then d2, tied
    run = run_frame(["q1"], np.array(["d1", "d2"]), rows, scores, "s", "main", "exact", 1, [2])
    pq = per_query_metrics(run, qrels, "toy", 2, metrics=("mrr@10",))
    assert pq.value.iloc[0] == pytest.approx(0.5)


def test_ranx_agrees_with_ir_measures_on_a_random_run():
    rng = np.random.default_rng(3)
    docs = [f"d{i}" for i in range(60)]
    qrels = _qrels([(f"q{q}", d, int(rng.integers(1, 4))) for q in range(25)
                    for d in rng.choice(docs, rng.integers(1, 6), replace=False)])
    ranked = {f"q{q}": list(rng.choice(docs, 40, replace=False)) for q in range(25)}
    run = _run(list(ranked), ranked)
    ours = per_query_metrics(run, qrels, "toy", 60, metrics=("ndcg@10", "mrr@10", "recall@10", "recall@100"))
    ours = ours.set_index(["query_id", "metric"]).value
    names = {"nDCG@10": "ndcg@10", "RR@10": "mrr@10", "R@10": "recall@10", "R@100": "recall@100"}
    theirs = ir_measures.iter_calc(
        [ir_measures.parse_measure(m) for m in names],
        [ir_measures.Qrel(q, d, int(r)) for q, d, r in zip(qrels.query_id, qrels.doc_id, qrels.relevance)],
        [ir_measures.ScoredDoc(q, d, float(-r)) for q, d, r in zip(run.query_id, run.doc_id, run["rank"])])
    checked = 0
    for m in theirs:
        assert ours[m.query_id, names[str(m.measure)]] == pytest.approx(m.value, abs=1e-9)
        checked += 1
    assert checked == 25 * 4


def _summary_fixture():
    pq = pd.DataFrame({
        "dataset": "toy", "system": ["a"] * 6 + ["b"] * 2, "variant": "main", "budget_param": "p",
        "budget_value": [1, 1, 2, 2, 3, 3, 1, 1], "frac_visited": [0.01, 0.03, 0.04, 0.06, 1, 1, 0.3, 0.3],
        "query_id": ["x", "y"] * 4, "metric": "ndcg@10", "value": [0.1, 0.3, 0.4, 0.6, 0.9, 0.9, 0.5, 0.7]})
    return pq, summarize(pq)


def test_summarize_averages_over_queries_and_carries_no_timing(tmp_path):
    _, summary = _summary_fixture()
    row = summary.set_index(["system", "budget_value"]).loc[("a", 2)]
    assert row.value == pytest.approx(0.5) and row.frac_visited == pytest.approx(0.05)
    assert "qps" not in summary.columns  # timings change every run; a summary must not
    write_table(summary, "summary", tmp_path / "summary.parquet")


def test_kmr_table_takes_the_largest_budget_under_each_target():
    _, summary = _summary_fixture()
    kmr = kmr_table(summary, targets=(0.01, 0.02, 0.05, 0.5, 1.0)).set_index(["system", "target"])
    assert np.isnan(kmr.loc[("a", 0.01)].value)  # cheapest point of a visits 2 %
    assert kmr.loc[("a", 0.02)].value == pytest.approx(0.2) and kmr.loc[("a", 0.05)].value == pytest.approx(0.5)
    assert kmr.loc[("a", 1.0)].budget_value == 3 and kmr.loc[("b", 0.5)].value == pytest.approx(0.6)
    assert np.isnan(kmr.loc[("b", 0.05)].value)


def test_time_searcher_records_throughput_batch_and_threads():
    docs = np.eye(8, dtype=np.float32)
    record = time_searcher(build_searcher("exact", docs), docs, 3, 1, batch_size=4, threads=1, repeats=2)
    assert record["items"] == 8 and record["batch_size"] == 4 and record["threads"] == 1 and record["qps"] > 0
    assert record["budget_param"] == "exact" and record["budget_value"] == 1.0
    calls = []
    time_search(lambda batch: calls.append(len(batch)), docs, batch_size=3, repeats=1)
    assert calls == [3, 3, 2] * 2  # warm-up pass + one timed pass


def test_psp_metrics_in_per_query_evaluation_match_ehi_xmc():
    from ehi.evaluate.xmc import label_matrix, psp_at_k

    docs = np.array(["l0", "l1", "l2", "l3"])
    qrels = pd.DataFrame({"query_id": ["a", "a", "b"], "doc_id": ["l0", "l3", "l2"], "relevance": [1, 1, 1],
                          "split": "test"})
    rows = np.array([[3, 1, 0], [0, 2, -1]])  # a: l3 (hit), l1, l0 (hit); b: l0, l2 (hit)
    run = run_frame(["a", "b"], docs, rows, np.ones((2, 3)), "ehi+exact", "main", "exact", 0, [4, 4])
    inv_prop = np.array([1.5, 2.0, 3.0, 4.0])
    got = per_query_metrics(run, qrels, "d", 4, ["psp@1", "psp@3", "ndcg@3"], inv_prop=inv_prop, doc_ids=docs)
    want = psp_at_k(rows, label_matrix(qrels, ["a", "b"], docs), inv_prop, ks=(1, 3))
    for k in (1, 3):
        values = got[got.metric == f"psp@{k}"].set_index("query_id").value.loc[["a", "b"]].to_numpy()
        np.testing.assert_allclose(values, want[f"psp@{k}"])
    assert {"ndcg@3"} < set(got.metric)
    with pytest.raises(ValueError, match="psp@1.*inv_prop"):
        per_query_metrics(run, qrels, "d", 4, ["psp@1"])


def test_a_run_without_rows_is_refused_not_scored_as_zeros():
    from ehi.core.errors import DataError

    qrels = _qrels([("q1", "d1", 1)])
    empty = _run(["q1"], {"q1": ["d1"]}).iloc[:0]
    with pytest.raises(DataError, match="a run without rows"):
        per_query_metrics(empty, qrels, "toy", corpus_size=10)
