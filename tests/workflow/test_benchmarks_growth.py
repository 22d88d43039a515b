"""The growth reader over two trained-benchmark folders: QPS at equal quality and costs against N."""

import numpy as np
import pandas as pd

from benchmarks import trained_growth


def _folder(path, n_docs, lists):
    path.mkdir(parents=True)
    rows = []
    for system, speed in (("ehi-floor+tree", 2.0), (f"ehi+faiss-ivf-L{lists}", 1.0), ("ehi+faiss-ivfpq", 5.0)):
        ceiling = 0.4 if system.endswith("ivfpq") else 0.6  # the PQ system never reaches 95% of 0.6
        for threads in (1, 2):
            for b, q in enumerate(np.linspace(0.2, ceiling, 5)):
                rows.append({"system": system, "budget_value": b + 1, "ndcg@10": q, "qps": speed * threads * 1e3 / (b + 1),
                             "frac_scored": (b + 1) / 10, "threads": threads, "n_docs": n_docs})
    pd.DataFrame(rows).to_parquet(path / "trained_curves.parquet")
    pd.DataFrame({"system": ["ehi-floor+tree", f"ehi+faiss-ivf-L{lists}", "ehi+faiss-ivfpq"],
                  "build_s": [1.0, 2.0, 3.0], "index_mb": [10.0, 20.0, 5.0], "train_s": [60.0, np.nan, np.nan],
                  "train_max_rss_mb": [500.0, np.nan, np.nan]}).to_parquet(path / "trained_costs.parquet")
    return path


def test_growth_table_and_figure(tmp_path):
    folders = [_folder(tmp_path / "a", 10_000, 100), _folder(tmp_path / "b", 1_000_000, 1000)]
    out = tmp_path / "growth" / "trained_growth"
    trained_growth.main([str(f) for f in folders] + ["--out", str(out)])
    table = pd.read_parquet(out.with_suffix(".parquet"))
    assert set(table.system) == {"ehi-floor+tree", "ehi+faiss-ivf-L", "ehi+faiss-ivfpq"}  # one name at every N
    assert sorted(table.n_docs.unique()) == [10_000, 1_000_000]
    tree = table[table.system == "ehi-floor+tree"].iloc[0]
    assert tree.qps == 2.0 * 1e3 / 5 and tree.train_s == 60.0  # 1 thread, the first point reaching 0.57
    assert table[table.system == "ehi+faiss-ivfpq"].qps.isna().all()
    assert out.with_suffix(".png").stat().st_size > 0 and "1000000" in out.with_suffix(".md").read_text()


def test_an_index_memory_below_its_documents_ids_is_left_out(tmp_path):
    """ScaNN's 2 MiB at 10^6 documents (the heap a freed group left): less than 4 bytes a document."""
    folder = _folder(tmp_path / "b", 1_000_000, 1000)
    costs = pd.read_parquet(folder / "trained_costs.parquet").assign(index_mb=[2.0, 20.0, 1500.0])
    costs.to_parquet(folder / "trained_costs.parquet")
    table = trained_growth.growth_table([folder]).set_index("system")
    assert np.isnan(table.loc["ehi-floor+tree", "index_mb"]) and table.loc["ehi+faiss-ivf-L", "index_mb"] == 20.0


def test_the_committed_growth_table_is_what_its_committed_folders_give(tmp_path, monkeypatch, repo_root):
    """results/benchmarks/trained_growth.* re-rendered by its command in docs/benchmarks.md."""
    monkeypatch.chdir(repo_root)
    out = tmp_path / "trained_growth"
    trained_growth.main(["results/benchmarks/trained_world_1e4", "results/benchmarks/trained_world_1e6", "--out", str(out)])
    committed = repo_root / "results" / "benchmarks" / "trained_growth"
    assert out.with_suffix(".md").read_text() == committed.with_suffix(".md").read_text()
    pd.testing.assert_frame_equal(pd.read_parquet(out.with_suffix(".parquet")), pd.read_parquet(committed.with_suffix(".parquet")))
