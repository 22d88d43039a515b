"""TREC run files: the metrics ir_measures and ranx compute from them equal ours from the run table."""

import ir_measures
import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from ranx import Qrels, Run, evaluate

from ehi.core.errors import DataError
from ehi.evaluate.metrics import per_query_metrics, run_frame
from ehi.evaluate.trec import (judged_without_results, monotone_scores, query_id_and_text, read_trec, tag,
                              write_trec_qrels, write_trec_runs)


def _sweep(rng, n_queries=20, n_docs=50, k=30):
    """A two-budget run with tied and out-of-order scores (what a PQ index or duplicates give)."""
    docs = np.array([f"doc{i}" for i in range(n_docs)])
    frames = []
    for budget in (2, 8):
        rows = np.stack([rng.choice(n_docs, k, replace=False) for _ in range(n_queries)])
        scores = np.sort(rng.random((n_queries, k)).astype(np.float32), axis=1)[:, ::-1].copy()
        scores[:, 3] = scores[:, 2]  # a tie
        scores[:, 6] = scores[:, 4] + 0.5  # out of order
        frames.append(run_frame([f"q{i}" for i in range(n_queries)], docs, rows, scores, "ehi+tree", "main",
                                "beam", budget, np.full(n_queries, budget * 5)))
    qrels = pd.DataFrame([(f"q{q}", d, int(rng.integers(1, 3))) for q in range(n_queries)
                          for d in rng.choice(docs, 4, replace=False)],
                         columns=["query_id", "doc_id", "relevance"]).assign(split="test")
    return pd.concat(frames, ignore_index=True), qrels


def test_monotone_scores_keep_the_order_and_change_only_what_must():
    assert monotone_scores([3.0, 2.0, 1.0]).tolist() == [3.0, 2.0, 1.0]
    fixed = monotone_scores([3.0, 2.0, 2.0, 2.5, 1.0])
    assert np.all(np.diff(fixed) < 0) and fixed[[0, 1, 4]].tolist() == [3.0, 2.0, 1.0]
    assert fixed[2] == pytest.approx(2.0, abs=1e-6) and fixed.dtype == np.float32


def test_trec_files_score_as_the_run_table_does(tmp_path):
    run, qrels = _sweep(np.random.default_rng(0))
    paths = write_trec_runs(run, tmp_path)
    assert sorted(p.name for p in paths) == ["beam=2.trec", "beam=8.trec"]
    ours = per_query_metrics(run, qrels, "toy", 50, metrics=("ndcg@10", "recall@10"))
    for path, budget in zip(paths, (2.0, 8.0)):
        lines = read_trec(path)
        assert set(lines.tag) == {tag("ehi+tree", "beam", budget)} == {f"ehi+tree@beam={budget:g}"}
        assert (lines.Q0 == "Q0").all() and lines.groupby("query_id")["rank"].first().eq(1).all()
        want = ours[ours.budget_value == budget].set_index(["query_id", "metric"]).value
        theirs = ir_measures.iter_calc([ir_measures.nDCG @ 10, ir_measures.R @ 10],
                                       list(ir_measures.read_trec_qrels(_qrels_file(qrels, tmp_path))),
                                       list(ir_measures.read_trec_run(str(path))))
        names = {"nDCG@10": "ndcg@10", "R@10": "recall@10"}
        checked = [pytest.approx(want[m.query_id, names[str(m.measure)]], abs=1e-12) == m.value for m in theirs]
        assert len(checked) == 40 and all(checked)
        ranx_run = Run.from_file(str(path), kind="trec")
        ranx_qrels = Qrels.from_file(_qrels_file(qrels, tmp_path), kind="trec")
        mean = evaluate(ranx_qrels, ranx_run, "ndcg@10")
        assert mean == pytest.approx(want[:, "ndcg@10"].mean(), abs=1e-12)


def _qrels_file(qrels: pd.DataFrame, tmp_path) -> str:
    path = tmp_path / "qrels.txt"
    path.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in zip(qrels.query_id, qrels.doc_id, qrels.relevance)))
    return str(path)


def test_trec_eval_with_c_scores_as_the_pipeline_and_without_it_over_the_run_only(tmp_path):
    """A small budget leaves judged queries with no result: they have no line in the run file, the
    pipeline scores them 0, trec_eval -c (mean over the qrels' queries) agrees, plain trec_eval
    (mean over the run's queries) does not."""
    run, qrels = _sweep(np.random.default_rng(2))
    empty = {"q0", "q3", "q7"}
    run = run[~((run.budget_value == 2) & run.query_id.isin(empty))]
    qrels = pd.concat([qrels, pd.DataFrame({"query_id": ["q1", "q99"], "doc_id": ["doc0", "doc1"],
                                            "relevance": [0, 0], "split": "test"})])  # unjudged grades
    paths = write_trec_runs(run, tmp_path)
    qrels_path = write_trec_qrels(qrels, tmp_path / "qrels.txt")
    assert judged_without_results(run, qrels) == {"beam=2": 3, "beam=8": 0}
    trec_qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    assert {q.query_id for q in trec_qrels} == {f"q{i}" for i in range(20)} and min(q.relevance for q in trec_qrels) >= 1
    ours = per_query_metrics(run, qrels, "toy", 50, metrics=("ndcg@10",))
    qrels_dict = {}
    for q in trec_qrels:
        qrels_dict.setdefault(q.query_id, {})[q.doc_id] = q.relevance
    evaluator = pytrec_eval.RelevanceEvaluator(qrels_dict, {"ndcg_cut.10"})  # trec_eval's own code
    for path, budget in zip(paths, (2.0, 8.0)):
        run_dict = {}
        for line in read_trec(path).itertuples():
            run_dict.setdefault(line.query_id, {})[line.doc_id] = float(line.score)
        values = [v["ndcg_cut_10"] for v in evaluator.evaluate(run_dict).values()]  # the run's queries only
        with_c = sum(values) / len(qrels_dict)  # trec_eval -c: every qrels query, 0 for one the run lacks
        without_c = float(np.mean(values))
        pipeline = ours[ours.budget_value == budget].value.mean()
        assert with_c == pytest.approx(pipeline, abs=1e-12)
        assert (without_c == pytest.approx(pipeline, abs=1e-12)) == (budget == 8.0)


def test_ids_with_whitespace_are_refused(tmp_path):
    run, _ = _sweep(np.random.default_rng(1), n_queries=2)
    run.loc[0, "doc_id"] = "two words"
    with pytest.raises(DataError, match="whitespace"):
        write_trec_runs(run, tmp_path)
    run.loc[0, "doc_id"] = "nul\x00byte"
    with pytest.raises(DataError, match="control character"):
        write_trec_runs(run, tmp_path)


def test_query_lines_may_carry_their_id():
    assert query_id_and_text(3, "PLAIN-7\twhat causes fever") == ("PLAIN-7", "what causes fever")
    assert query_id_and_text(3, "what causes fever") == ("3", "what causes fever")
    with pytest.raises(DataError, match="queries.tsv, line 3: qid 'q1' has no query text after the tab"):
        query_id_and_text(3, "q1\t ", "queries.tsv")
