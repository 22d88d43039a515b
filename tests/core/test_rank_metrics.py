"""The native nDCG/MRR/recall/precision/hits equal ranx's values bit for bit, per query and as the
dev screens' means, on random graded runs with the cases that trip implementations: judged queries
missing from the run, runs shorter than the cutoff, grade-0 judgements, cutoffs past the corpus."""

import numpy as np
import pandas as pd
import pytest
from ranx import Qrels, Run, evaluate

from ehi.core.rank_metrics import rank_metrics
from ehi.core.ranking import ranked_rows_metrics
from ehi.evaluate.metrics import GROUP, _ranx_values, capped_metrics, per_query_metrics, run_frame
from ehi.evaluate.native_scorers import judged_qids

NAMES = ["ndcg@1", "ndcg@10", "ndcg@100", "mrr@10", "recall@5", "recall@100", "precision@3", "precision@50",
         "hits@10"]


def _world(seed: int, n_docs: int = 60, n_queries: int = 40, k: int = 30):
    rng = np.random.default_rng(seed)
    qids = [str(rng.integers(0, 10 ** rng.integers(1, 4))) + f"q{i}" for i in range(n_queries)]
    doc_ids = np.array([f"d{i}" for i in range(n_docs)])
    judgements = []
    for q in qids[: int(0.8 * n_queries)]:  # the rest are retrieved but not judged
        for d in rng.choice(n_docs, size=rng.integers(1, 8), replace=False):
            judgements.append((q, doc_ids[d], int(rng.integers(0, 4))))  # grade 0: judged, not relevant
    qrels = pd.DataFrame(judgements, columns=["query_id", "doc_id", "relevance"]).assign(split="test")
    searched = [q for q in qids if rng.random() > 0.15]  # some judged queries are missing from the run
    rows = np.full((len(searched), k), -1)
    for i in range(len(searched)):
        n = int(rng.integers(0, k + 1))  # runs shorter than the cutoffs, empty ones too
        rows[i, :n] = rng.choice(n_docs, size=n, replace=False)
    scores = -np.arange(k, dtype=np.float32)[None].repeat(len(searched), 0)
    run = run_frame(searched, doc_ids, rows, scores, "de+exact", "main", "exact", 1.0, np.full(len(searched), k))
    return qrels, run, rows, searched


@pytest.mark.parametrize("seed", range(6))
def test_per_query_values_equal_ranx_bit_for_bit(seed):
    qrels, run, _, _ = _world(seed)
    corpus_size = 40  # below two cutoffs: capped like ranx's
    qids = judged_qids(qrels)
    ranx_names = capped_metrics(NAMES, corpus_size)
    expected = _ranx_values(qrels, run, sorted(set(ranx_names.values())), qids)
    got = per_query_metrics(run, qrels, "toy", corpus_size, NAMES)
    assert got.groupby(GROUP).ngroups == 1
    for name in NAMES:
        values = got[got.metric == name].set_index("query_id").value.reindex(qids).to_numpy()
        np.testing.assert_array_equal(values, np.asarray(expected[ranx_names[name]]), err_msg=name)


@pytest.mark.parametrize("seed", range(6))
def test_dev_screen_means_equal_ranx_bit_for_bit(seed):
    qrels, _, rows, searched = _world(seed, n_queries=120)
    row_of = {f"d{i}": i for i in range(60)}
    relevant = []
    for q in searched:
        judged = qrels[(qrels.query_id == q) & (qrels.relevance >= 1)]
        relevant.append({row_of[d]: int(r) for d, r in zip(judged.doc_id, judged.relevance)})
    names = ("ndcg@10", "recall@100", "mrr@10")
    got = ranked_rows_metrics(rows, relevant, names)
    judged = [i for i, g in enumerate(relevant) if g]
    run = {str(i): {str(int(d)): -float(r) for r, d in enumerate(rows[i][rows[i] >= 0])} or {"-1": 0.0} for i in judged}
    values = evaluate(Qrels({str(i): {str(d): v for d, v in relevant[i].items()} for i in judged}), Run(run),
                      list(names), return_mean=False, make_comparable=True)
    for name in names:
        assert got[name] == float(np.sum(values[name]) / len(rows)), name


def test_hand_computed_values():
    # ranks 1..3 hold grades 0, 2, 1; the query's relevant grades are 2, 1, 1 (one never retrieved)
    values = rank_metrics(np.array([[0.0, 2.0, 1.0]]), np.array([3]), np.array([[2.0, 1.0, 1.0]]),
                          ["ndcg@10", "mrr@10", "recall@2", "precision@2", "hits@10"])
    dcg = 2 / np.log2(3) + 1 / np.log2(4)
    idcg = 2 / np.log2(2) + 1 / np.log2(3) + 1 / np.log2(4)
    assert values["ndcg@10"][0] == pytest.approx(dcg / idcg)
    assert values["mrr@10"][0] == 0.5 and values["recall@2"][0] == pytest.approx(1 / 3)
    assert values["precision@2"][0] == 0.5 and values["hits@10"][0] == 2


def test_a_name_without_a_native_family_is_refused():
    with pytest.raises(ValueError, match="no native metric 'map@10'"):
        rank_metrics(np.zeros((1, 1)), np.array([1]), np.ones((1, 1)), ["map@10"])


def test_names_of_no_registered_family_still_go_to_ranx_in_the_same_query_order():
    qrels, run, _, _ = _world(7)
    got = per_query_metrics(run, qrels, "toy", 60, ["ndcg@10", "map@10"])
    qids = judged_qids(qrels)
    expected = _ranx_values(qrels, run, ["map@10", "ndcg@10"], qids)
    for name in ("map@10", "ndcg@10"):
        values = got[got.metric == name].set_index("query_id").value.reindex(qids).to_numpy()
        np.testing.assert_array_equal(values, np.asarray(expected[name]), err_msg=name)
