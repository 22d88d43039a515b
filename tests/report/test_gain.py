"""ehi.report.gain: the tree's gain over IVF at equal work, against hand-computed values."""

import numpy as np
import pandas as pd
import pytest

from ehi.report.gain import GainSystems, gain_rows, work_axis

# as a config's gain.trees and gain.controls name them
SYSTEMS = GainSystems(trees=("ehi-floor+tree", "ehi+tree"), controls=("pre+ivf-lists", "ehi+faiss-ivf"))


def _rows(system, seed, budget_value, frac_work, values, frac_visited=None):
    n = len(values)
    return pd.DataFrame({"dataset": "toy", "system": system, "variant": "main", "budget_param": "beam",
                         "budget_value": float(budget_value), "frac_visited": frac_visited if frac_visited is not None else frac_work,
                         "frac_work": frac_work, "query_id": [f"q{i}" for i in range(n)], "metric": "ndcg@10",
                         "value": values, "seed": seed})


def test_gain_is_read_at_each_systems_largest_point_within_the_work_budget():
    rng = np.random.default_rng(0)
    tree = [rng.uniform(size=20) for _ in range(2)]
    ivf = rng.uniform(size=20)
    frames = []
    for seed in (0, 1):
        frames += [_rows("ehi-floor+tree", seed, 1, 0.008, tree[seed]),
                   _rows("ehi-floor+tree", seed, 2, 0.03, tree[seed] + 1)]  # past 2% of work: never read at 2%
    frames += [_rows("pre+ivf-lists", 0, 1, 0.015, ivf)]  # searched once: nothing trained, one value in every seed
    per_query, derived = work_axis(pd.concat(frames, ignore_index=True), leaves=10, n_docs=1000)
    assert not derived
    table = gain_rows(per_query, "ndcg@10", SYSTEMS, budgets=(0.01, 0.02)).set_index("budget")
    assert np.isnan(table.loc[0.01, "gain"])  # IVF has no point within 1% of work
    want = [tree[s].mean() - ivf.mean() for s in (0, 1)]
    assert table.loc[0.02, "gain"] == pytest.approx(np.mean(want))
    assert table.loc[0.02, "gain_sd"] == pytest.approx(np.std(want, ddof=1))
    assert table.loc[0.02, "n_queries"] == 20 and 0 <= table.loc[0.02, "p"] <= 1


def test_derived_work_adds_the_lists_to_partition_searches_only():
    frame = pd.concat([_rows("ehi+tree", 0, 1, np.nan, [0.5], frac_visited=0.01),
                       _rows("de+faiss-hnsw", 0, 16, np.nan, [0.5], frac_visited=0.01)], ignore_index=True)
    out, derived = work_axis(frame, leaves=50, n_docs=1000)
    assert derived and out.frac_visited.tolist() == pytest.approx([0.06, 0.01])


def test_a_query_without_a_count_does_not_mark_a_counted_dataset_derived():
    """A query that reached only empty leaves scored no document and has no count; its system's
    other queries are counted, so the dataset's work stays counted and that query gets routing only."""
    frame = _rows("ehi+tree", 0, 1, [0.02, np.nan], [0.5, 0.0], frac_visited=[0.01, 0.0])
    out, derived = work_axis(frame, leaves=10, n_docs=1000)
    assert not derived
    assert out.frac_visited.tolist() == pytest.approx([0.02, 0.01])



def _dataset(root, facts, per_query, leaf_count=None):
    """A results folder: data facts, each system's per-query table, and the dev leaf count when given."""
    from ehi.core.io import write_json, write_table

    (root / "main" / "per_query").mkdir(parents=True)
    write_json(facts, root / "data.json")
    per_query = pd.concat([per_query, per_query.assign(metric="recall@100")], ignore_index=True)  # both METRICS
    for system, rows in per_query.groupby("system"):
        write_table(rows.drop(columns="seed"), "per_query", root / "main" / "per_query" / f"{system}.parquet")
    if leaf_count:
        write_json({"branching": leaf_count}, root / "dev_leaf_count.json")
    return root


def _files(results):
    """The per-query tables rule gain_table would declare for ``results``."""
    from ehi.report.gain_inputs import committed_per_query

    return tuple(committed_per_query(results, {}, {}))


def test_sizes_come_from_the_data_facts_and_the_leaf_count_from_the_dev_choice(tmp_path):
    """N, the training queries and a world's asymmetry are the dataset's data facts, never typed;
    the leaf count is rule dev_leaf_count's choice under branching auto."""
    from ehi.report.gain import GainDataset, dataset_gains, leaf_count

    facts = {"dataset": "toy", "documents": 1000, "queries_per_split": {"train": 30, "dev": 5, "test": 20},
             "world": {"asymmetry": 1.0}}
    rng = np.random.default_rng(0)
    tree, ivf = rng.uniform(size=20), rng.uniform(size=20)
    per_query = pd.concat([_rows("ehi-floor+tree", 0, 1, 0.008, tree), _rows("ehi+faiss-ivf", 0, 1, 0.009, ivf)],
                          ignore_index=True)
    results = _dataset(tmp_path / "toy", facts, per_query, leaf_count=10)
    assert leaf_count(results, "auto") == 10 and leaf_count(results, 40) == 40
    table, systems = dataset_gains(GainDataset(results, leaf_count(results, "auto"), {}, per_query=_files(results)),
                                   SYSTEMS)
    row = table[table.budget == 0.01].iloc[0]
    assert (row.n_docs, row.train_queries_per_leaf, row.leaves, row.asymmetry) == (1000, 3.0, 10, 1.0)
    assert row.gain == pytest.approx(tree.mean() - ivf.mean()) and set(systems.system) == {"ehi-floor+tree", "ehi+faiss-ivf"}
    with pytest.raises(ValueError, match="neither auto nor a leaf count"):
        leaf_count(results, "some")


def test_a_collection_without_world_knobs_has_no_asymmetry(tmp_path):
    from ehi.report.gain import GainDataset, dataset_gains

    facts = {"dataset": "toy", "documents": 500, "queries_per_split": {"train": 8, "test": 20}}
    rng = np.random.default_rng(1)
    per_query = pd.concat([_rows("ehi-floor+tree", 0, 1, 0.008, rng.uniform(size=20)),
                           _rows("ehi+faiss-ivf", 0, 1, 0.009, rng.uniform(size=20))], ignore_index=True)
    results = _dataset(tmp_path / "toy", facts, per_query)
    table, _ = dataset_gains(GainDataset(results, 4, {}, per_query=_files(results)), SYSTEMS)
    assert not table.empty and table.asymmetry.isna().all() and (table.train_queries_per_leaf == 2.0).all()


def test_a_dataset_of_dataset_pairs_reads_each_tree_against_its_own_controls_only():
    """gain.dataset_pairs: in that dataset a tree on DE's vectors is read against k-means lists on DE's
    vectors, a frozen tree against the pretrained vectors' lists, and a tree it does not name (there
    the joint tree, on its own tower) not at all; other datasets keep trees x controls."""
    systems = GainSystems.from_config({"trees": ["ehi+tree"], "controls": ["pre+ivf-lists"], "dataset_pairs": {
        "two_vectors": {"ehi-2stage+tree": ["de+ivf-lists", "de+faiss-ivf"], "ehi-frozen+tree": ["pre+ivf-lists"]}}})
    frames = [_rows(s, 0, 1, 0.01, [0.5, 0.6]) for s in
              ("ehi+tree", "ehi-2stage+tree", "ehi-frozen+tree", "de+ivf-lists", "de+faiss-ivf", "pre+ivf-lists")]
    per_query, _ = work_axis(pd.concat(frames, ignore_index=True), leaves=10, n_docs=1000)
    pairs = gain_rows(per_query, "ndcg@10", systems, budgets=(0.01,), dataset="two_vectors")[["tree", "ivf"]]
    assert pairs.values.tolist() == [["ehi-2stage+tree", "de+ivf-lists"], ["ehi-2stage+tree", "de+faiss-ivf"],
                                     ["ehi-frozen+tree", "pre+ivf-lists"]]
    assert systems.is_own_control("two_vectors", "ehi-2stage+tree", "de+ivf-lists")
    assert not systems.is_own_control("two_vectors", "ehi-2stage+tree", "de+faiss-ivf")
    other = gain_rows(per_query, "ndcg@10", systems, budgets=(0.01,), dataset="one_vector")[["tree", "ivf"]]
    assert other.values.tolist() == [["ehi+tree", "pre+ivf-lists"]]
