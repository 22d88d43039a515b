"""Per-query tables checked where they are read (ehi.evaluate.result_checks): rule summarize, rule
significance and rule ablation_significance refuse, in one line naming the file, a table without
rows, a metric no registry knows, a value no search can score and a table missing some of its
split's judged queries; and the report says what an empty test table is."""

import numpy as np
import pandas as pd
import pytest

from ehi.core.errors import DataError
from ehi.core.io import read_table, write_table
from ehi.evaluate.ablation_tests import write_ablation_tests
from ehi.evaluate.result_checks import read_per_query

SYSTEMS = ("ehi+tree", "ehi+exact")
QUERIES = [f"q{i}" for i in range(20)]


def per_query(system, variant, frac, values):
    return pd.DataFrame({"dataset": "d", "system": system, "variant": variant, "budget_param": "p",
                         "budget_value": frac, "frac_visited": frac, "query_id": QUERIES[:len(values)],
                         "metric": "ndcg@10", "value": values})


def write_results(root, variants=("main", "height~1")) -> dict[str, list]:
    """Per-query tables of the ablation systems of each variant: {variant: their paths}."""
    rng = np.random.default_rng(0)
    out = {}
    for shift, variant in enumerate(variants):
        out[variant] = [write_table(per_query(s, variant, f, np.clip(rng.uniform(size=len(QUERIES)) - 0.1 * shift, 0, 1)),
                                    "per_query", root / variant / "per_query" / f"{s}.parquet", meta={"split": "test"})
                        for s, f in (("ehi+tree", 0.05), ("ehi+exact", 1.0))]
    return out


def ablation_tests_of(paths, out, qrels=None):
    return write_ablation_tests([p for ps in paths.values() for p in ps], out, {"shape": ["height~1"]}, ["ndcg@10"],
                                SYSTEMS, n_permutations=200, qrels=qrels)


def spoil(path, how):
    frame = read_table(path)
    write_table(how(frame), "per_query", path, meta={"split": "test"})


@pytest.mark.parametrize("how, said", [
    (lambda f: f.assign(value=np.nan), "impossible metric value"),
    (lambda f: f.assign(value=7.0), "impossible metric value"),
    (lambda f: f.iloc[:0], "without rows"),
    (lambda f: f.iloc[5:], "5 of the split's 20 judged queries missing"),
    (lambda f: f.assign(metric="foo@10"), "'foo@10' is not a known metric"),
])
def test_ablation_tests_refuse_a_per_query_table_no_search_could_make(tmp_path, how, said):
    paths = write_results(tmp_path)
    bad = paths["height~1"][0]
    spoil(bad, how)
    with pytest.raises(DataError) as err:
        ablation_tests_of(paths, tmp_path / "ablation_significance.parquet")
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"{bad}: ") and said in message
    assert not (tmp_path / "ablation_significance.parquet").exists()


def test_the_split_queries_come_from_the_qrels_where_given(tmp_path):
    """Every table without q0: only the split's judged queries (the prepared qrels) can tell."""
    paths = write_results(tmp_path)
    for path in [p for ps in paths.values() for p in ps]:
        spoil(path, lambda f: f[f.query_id != "q0"])
    qrels = pd.DataFrame({"query_id": QUERIES + ["t0"], "doc_id": "d0", "relevance": 1,
                          "split": ["test"] * len(QUERIES) + ["train"]})
    write_table(qrels, "qrels", tmp_path / "qrels.parquet")
    assert len(ablation_tests_of(paths, tmp_path / "without_qrels.parquet"))  # the tables agree with each other
    with pytest.raises(DataError, match="1 of the split's 20 judged queries missing .* \\(first q0\\)"):
        ablation_tests_of(paths, tmp_path / "with_qrels.parquet", qrels=tmp_path / "qrels.parquet")


def test_good_tables_are_read_as_written(tmp_path):
    paths = write_results(tmp_path)
    frames = read_per_query(paths["main"])
    assert [len(f) for f in frames] == [len(QUERIES)] * 2
    assert set(ablation_tests_of(paths, tmp_path / "tests.parquet").variant) == {"height~1"}


def test_an_empty_significance_table_says_why_not_no_ehi_search(tmp_path):
    from ehi.report.significance_table import render_significance

    empty = pd.DataFrame(columns=["metric", "system_a", "system_b", "budget", "delta", "significant", "test"])
    md = render_significance(empty, tmp_path / "with_ehi", systems=["ehi+tree", "de+exact"])[0].read_text()
    assert "no EHI search" not in md and "No comparison could be made" in md and "ehi+tree ran beside 1 other" in md
    md = render_significance(empty, tmp_path / "no_ehi", systems=["pre+exact", "de+exact"])[0].read_text()
    assert "include no EHI search with a baseline beside it" in md
