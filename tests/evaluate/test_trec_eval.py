"""python -m ehi.evaluate.trec_eval: trec_eval's arguments and output over pytrec_eval, -c as the pipeline averages."""

import pytest

from ehi.evaluate.trec_eval import main

QRELS = "q1 0 d1 1\nq1 0 d4 1\nq2 0 d2 1\nq3 0 d3 2\n"
# q1: its two relevant documents at ranks 1 and 3; q2: its one at rank 1; q3 judged, but retrieved nothing
RUN = "q1 Q0 d1 1 0.9 t\nq1 Q0 d9 2 0.8 t\nq1 Q0 d4 3 0.7 t\nq2 Q0 d2 1 0.5 t\nq9 Q0 d2 1 0.5 t\n"
Q1_NDCG = (1 + 1 / 2) / (1 + 1 / 1.5849625007211563)  # DCG: ranks 1 and 3 over the ideal ranks 1 and 2


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.trec").write_text(RUN)
    return str(tmp_path / "qrels.txt"), str(tmp_path / "run.trec")


def _values(out: str) -> dict:
    return {(m.strip(), q): float(v) for m, q, v in (line.split("\t") for line in out.splitlines())}


def test_c_averages_over_every_judged_query_a_missing_one_scoring_zero(files, capsys):
    main(["-c", "-m", "ndcg_cut.10", *files])
    captured = capsys.readouterr()
    assert captured.out.startswith("ndcg_cut_10           \tall\t")  # trec_eval's layout
    assert _values(captured.out)[("ndcg_cut_10", "all")] == pytest.approx((Q1_NDCG + 1 + 0) / 3, abs=5e-5)
    assert captured.err == ""


def test_without_c_the_average_is_over_the_runs_judged_queries_and_stderr_says_so(files, capsys):
    main(["-q", "-m", "ndcg_cut.10", "-m", "recall.100", *files])
    captured = capsys.readouterr()
    values = _values(captured.out)
    assert values[("ndcg_cut_10", "q1")] == pytest.approx(Q1_NDCG, abs=5e-5) and ("ndcg_cut_10", "q9") not in values
    assert values[("ndcg_cut_10", "all")] == pytest.approx((Q1_NDCG + 1) / 2, abs=5e-5)
    assert values[("recall_100", "all")] == 1.0
    assert "1 judged queries have no line in the run" in captured.err and "-c scores them 0" in captured.err


def test_bad_input_is_one_line_naming_the_file_or_measure(files, tmp_path):
    with pytest.raises(SystemExit) as exc:
        main(["-m", "ndcg@10", *files])
    assert "no trec_eval measure ndcg@10" in str(exc.value.code)
    (tmp_path / "bad.trec").write_text("q1 Q0 d1 1 high t\n")
    with pytest.raises(SystemExit) as exc:
        main([files[0], str(tmp_path / "bad.trec")])
    assert str(exc.value.code).endswith("bad.trec, line 1: score 'high' is not a number")
    with pytest.raises(SystemExit) as exc:
        main([files[1], files[0]])  # the run where the qrels go: trec_eval's order is qrels first
    assert "line 1: 6 fields where this format has 4" in str(exc.value.code)
