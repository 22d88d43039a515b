"""Routing counts (ehi.core.work): what each index scores before its documents, against hand counts."""

import numpy as np
import pandas as pd
import pytest
import torch

from ehi.core.io import read_table, write_table
from ehi.core.work import fraction_of_work, tree_routing_units
from ehi.evaluate.metrics import per_query_metrics, run_frame, summarize
from ehi.model.tree import TreeIndexer
from ehi.search.exported import ExportedIndex
from ehi.search.registry import build_searcher
from ehi.search.route import NumpyRouter


@pytest.fixture(scope="module")
def docs():
    x = np.random.default_rng(5).standard_normal((300, 16)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_tree_count_by_hand():
    # folded levels: H*B rows whatever the beam
    assert tree_routing_units(2, 4, beam=1, dim=16) == tree_routing_units(2, 4, beam=16, dim=16) == 8
    # per node, hidden 8 of dim 16, beam 3: level 0 adds 8 + ceil(1*4*8/16) = 10, level 1 8 + ceil(3*4*8/16) = 14
    assert tree_routing_units(2, 4, beam=3, dim=16, hidden=8, per_node=True) == 8 + 10 + 14


def test_router_reports_its_own_shape():
    torch.manual_seed(0)
    router = NumpyRouter.from_indexer(TreeIndexer(16, 2, 4, hidden=8, per_node=True))
    assert router.routing_units(3) == 32
    assert NumpyRouter.from_indexer(TreeIndexer(16, 3, 2)).routing_units(5) == 6


def test_partition_indexes_count_every_centroid_and_graphs_none(docs):
    assert build_searcher("faiss-ivf", docs, nlist=8).routing_units(3) == 8
    assert build_searcher("faiss-ivfpq", docs, nlist=8, m=8, nbits=4).routing_units(1) == 8
    assert build_searcher("scann", docs, num_leaves=6).routing_units(2) == 6
    assert build_searcher("faiss-hnsw", docs, M=8, ef_construction=20).routing_units(16) == 0
    assert build_searcher("exact", docs).routing_units(1) == 0
    torch.manual_seed(0)
    one_level = TreeIndexer(16, 1, 5).standardize_(docs)
    assert ExportedIndex.from_leaves(one_level, docs, one_level.assign_leaves(docs)).routing_units(2) == 5  # FAISS's quantizer: 5 centroids
    two_level = TreeIndexer(16, 2, 3).standardize_(docs)
    assert ExportedIndex.from_leaves(two_level, docs, two_level.assign_leaves(docs)).routing_units(4) == 6  # the router: 2 x 3 rows


def test_fraction_of_work_reaches_the_tables(tmp_path):
    run = pd.concat([
        run_frame(["q1", "q2"], ["d0", "d1", "d2", "d3"], np.array([[0, 1], [2, -1]]), np.ones((2, 2)),
                  "de+faiss-ivf", "main", "nprobe", 1, n_scored=[2, 1], n_routed=[2, 2]),
        run_frame(["q1", "q2"], ["d0", "d1", "d2", "d3"], np.array([[0, 1], [2, -1]]), np.ones((2, 2)),
                  "de+exact", "main", "exact", 1, n_scored=[4, 4]),  # routing not reported
    ])
    write_table(run, "run", tmp_path / "run.parquet")
    qrels = pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d0", "d2"], "relevance": [1, 1], "split": "test"})
    per_query = per_query_metrics(read_table(tmp_path / "run.parquet", "run"), qrels, "toy", 4, ["ndcg@10"])
    ivf = per_query[per_query.system == "de+faiss-ivf"].set_index("query_id")
    assert ivf.frac_visited.to_dict() == {"q1": 0.5, "q2": 0.25}
    assert ivf.frac_work.to_dict() == {"q1": 1.0, "q2": 0.75}  # (documents + 2 centroids) / 4
    assert per_query[per_query.system == "de+exact"].frac_work.isna().all()
    summary = summarize(per_query).set_index("system")
    assert summary.loc["de+faiss-ivf", "frac_work"] == pytest.approx(0.875)
    np.testing.assert_allclose(fraction_of_work([2, 1], [2, 2], 4), [1.0, 0.75])


def test_a_fraction_of_documents_gets_the_routing_share_added_as_it_is():
    """A run recorded without counts (gain's derived work): the fraction kept, the routing's share
    added, NaN kept where nothing was scored."""
    frac = np.array([1 / 3, np.nan, 0.1])
    got = fraction_of_work(frac, [7, 7, 0], 49, scored_is_fraction=True)
    np.testing.assert_array_equal(got, [1 / 3 + 7 / 49, np.nan, 0.1])
    np.testing.assert_array_equal(fraction_of_work([2, np.nan], [1, 1], 4), [0.75, np.nan])


def test_the_fraction_of_work_is_computed_in_one_place():
    """Nowhere in ehi/ but ehi/core/work.py adds routing units to documents scored: every such sum
    is :func:`ehi.core.work.fraction_of_work`'s, so the cost model has one definition."""
    import ast
    from pathlib import Path

    package = Path(__file__).resolve().parents[2] / "ehi"
    routing = ("routing_units", "n_routed", "routing")
    found = []
    for path in sorted(package.rglob("*.py")):
        if path.relative_to(package).as_posix() == "core/work.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
                names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
                names |= {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
                if names & set(routing):
                    found.append(f"{path.relative_to(package)}:{node.lineno}")
    assert not found, found


def test_a_summary_without_the_work_column_still_reads(tmp_path):
    summary = pd.DataFrame({"dataset": ["toy"], "system": ["de+exact"], "variant": ["main"], "budget_param": ["exact"],
                            "budget_value": [1.0], "frac_visited": [1.0], "metric": ["ndcg@10"], "value": [0.5],
                            "qps": [10.0]})
    summary.to_parquet(tmp_path / "summary.parquet")
    back = read_table(tmp_path / "summary.parquet", "summary")
    assert np.isnan(back.frac_work.iloc[0]) and back.value.iloc[0] == 0.5


def test_tables_without_routing_counts_are_written_as_before(tmp_path):
    run = run_frame(["q1"], ["d0", "d1"], np.array([[1, 0]]), np.ones((1, 2)), "de+exact", "main", "exact", 1,
                    n_scored=[2])
    write_table(run, "run", tmp_path / "run.parquet")
    assert "n_routed" not in pd.read_parquet(tmp_path / "run.parquet").columns
    qrels = pd.DataFrame({"query_id": ["q1"], "doc_id": ["d0"], "relevance": [1], "split": "test"})
    per_query = per_query_metrics(read_table(tmp_path / "run.parquet", "run"), qrels, "toy", 2, ["ndcg@10"])
    write_table(per_query, "per_query", tmp_path / "per_query.parquet")
    write_table(summarize(per_query), "summary", tmp_path / "summary.parquet")
    for name in ("per_query", "summary"):
        written = pd.read_parquet(tmp_path / f"{name}.parquet")
        assert "frac_work" not in written.columns and written.frac_visited.iloc[0] == 1.0


def test_seed_averaged_points_carry_the_fraction_of_work():
    from ehi.evaluate.seeds import per_query_over_seeds

    frames = [run_frame(["q1", "q2"], ["d0", "d1", "d2", "d3"], np.array([[0, 1], [2, -1]]), np.ones((2, 2)),
                        "ehi+tree", "main", "beam", 1, n_scored=[1, 1], n_routed=[1, 1]).assign(seed=s) for s in (0, 1)]
    qrels = pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d0", "d2"], "relevance": [1, 1], "split": "test"})
    per_query = pd.concat([per_query_metrics(f.drop(columns="seed"), qrels, "toy", 4, ["ndcg@10"]).assign(seed=int(f.seed[0]))
                           for f in frames], ignore_index=True)
    averaged = per_query_over_seeds(per_query, [0.5], ["ndcg@10"])
    assert averaged[averaged.budget_value == 0.5].frac_work.tolist() == [0.5, 0.5]  # (1 document + 1 centroid) / 4
