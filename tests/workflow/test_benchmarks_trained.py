"""The trained-index benchmark end to end on a toy run's artefacts: tables, ratios, the figure.
Never a timing threshold: only the shape and sanity of the output count."""

import json

import numpy as np
import pytest
import pandas as pd
import torch

from ehi.model.tree import TreeIndexer
from ehi.search.config import SearchConfig
from ehi.search.tree_index import EHIIndex

from benchmarks import report, trained, trained_builds, trained_report

FLOOR = "indexer_init~ivf/lambda_balance~10.0/floor~kmeans"


def _artefacts(root, dataset, runs=("main/de", "main/ehi", "indexer_init~kmeans/ehi"), dim=16):
    """What a pipeline run leaves in resources/<ds>: data, embeddings per model, EHI indexes."""
    rng = np.random.default_rng(0)
    dataset.write(root / "data")
    for run in runs:
        docs = rng.standard_normal((len(dataset.corpus), dim)).astype(np.float32)
        docs /= np.linalg.norm(docs, axis=1, keepdims=True)
        queries = rng.standard_normal((len(dataset.queries), dim)).astype(np.float32)
        (root / run / "emb").mkdir(parents=True)
        np.save(root / run / "emb" / "corpus.npy", docs)
        np.save(root / run / "emb" / "queries.npy", queries)
        if run.endswith("ehi"):
            torch.manual_seed(0)
            EHIIndex.build(docs, TreeIndexer(dim, 2, 3).standardize_(docs)).save(root / run / "index")


@pytest.mark.integration  # the trained benchmark run end to end
def test_every_system_swept_timed_and_matched(tmp_path, tiny_dataset):
    _artefacts(tmp_path / "res", tiny_dataset)
    trained.main([str(tmp_path / "res"), str(tmp_path / "out"), "--rounds", "1", "--n-latency", "3"])
    curves = pd.read_parquet(tmp_path / "out" / "trained_curves.parquet")
    # 3^2 leaves: the controls with the tree's leaf count
    assert set(curves.system) == set(trained_builds.TREES) | set(trained_builds.PEERS) | {"de+faiss-ivf-L9",
                                                                                           "de+ivf-lists-pq"}
    assert curves[["ndcg@10", "recall@100", "exact_recall@100", "knn_recall@10", "frac_scored"]].stack().between(0, 1).all()
    assert (curves.qps > 0).all() and (curves.p99_ms >= curves.p50_ms).all()
    full = curves[curves.system == "ehi+tree"].sort_values("budget_value").iloc[-1]
    assert full.frac_scored == 1.0 and full["exact_recall@100"] == 1.0  # every leaf = exact search
    assert full["knn_recall@10"] == 1.0
    table = pd.read_parquet(tmp_path / "out" / "trained_matched.parquet")
    assert {("ehi+tree", "de+faiss-hnsw"), ("ehi+tree-pq", "de+faiss-ivfpq"),
            ("ehi+tree-pq", "de+ivf-lists-pq")} <= set(zip(table.ehi, table.peer))
    assert not (table.ehi.eq("ehi+tree") & table.peer.eq("de+faiss-ivfpq")).any()
    assert np.isfinite(table.qps_ratio).all() and (table.qps_ratio > 0).all()
    assert (tmp_path / "out" / "trained_pareto.png").stat().st_size > 0
    assert "de+faiss-hnsw" in (tmp_path / "out" / "trained.md").read_text()


@pytest.mark.integration  # the trained benchmark run end to end
def test_the_rounds_spread_brackets_each_ratio_and_is_shown(tmp_path, tiny_dataset):
    """Each point keeps its slowest and fastest round; each matched ratio gets the range the rounds
    allow (tree's slowest over peer's fastest, and back), which holds the ratio of the medians."""
    _artefacts(tmp_path / "res", tiny_dataset)
    trained.main([str(tmp_path / "res"), str(tmp_path / "out"), "--rounds", "3", "--n-latency", "3"])
    curves = pd.read_parquet(tmp_path / "out" / "trained_curves.parquet")
    assert ((curves.qps_min <= curves.qps) & (curves.qps <= curves.qps_max)).all()
    table = pd.read_parquet(tmp_path / "out" / "trained_matched.parquet")
    assert ((table.qps_ratio_low <= table.qps_ratio + 1e-12) & (table.qps_ratio <= table.qps_ratio_high + 1e-12)).all()
    md = (tmp_path / "out" / "trained.md").read_text()
    assert "qps_ratio_rounds" in md and trained_report.ROUNDS_NOTE in md
    row = table.iloc[0]
    assert f"{row.qps_ratio_low:.2f}-{row.qps_ratio_high:.2f}" in md


@pytest.mark.integration  # the trained benchmark run end to end
def test_without_de_the_peers_search_ehis_own_vectors(tmp_path, tiny_dataset):
    """A frozen-encoder run: no DE; the floor tree (named by its variant, never found by its folder's
    name) and the seed replicas sit beside main."""
    res = tmp_path / "res"
    _artefacts(res, tiny_dataset, ("main/ehi", f"{FLOOR}/ehi", "seed~1/ehi", f"{FLOOR}/seed~1/ehi"))
    peers = {f"ehi+{m}" for m in trained_builds.PEER_METHODS}
    assert set(trained.discover(res)) == {"ehi+tree", "ehi+tree-pq", "ehi+faiss-ivf-L9", "ehi+ivf-lists-pq"} | peers
    trees = {"ehi+tree": "main", "ehi+tree-pq": "main", "ehi-floor+tree": FLOOR}
    folders = trained.discover(res, trees=trees)
    assert set(folders) == {*trees, "ehi+faiss-ivf-L9", "ehi+ivf-lists-pq"} | peers
    assert folders["ehi-floor+tree"] == res / FLOOR / "ehi"
    assert all(folders[p] == res / "main" / "ehi" for p in peers)  # the vectors the tree routes
    replicas = trained.discover(res, seed=1, trees={"ehi+tree": "seed~1", "ehi-floor+tree": f"{FLOOR}/seed~1"})
    assert replicas["ehi-floor+tree"] == res / FLOOR / "seed~1" / "ehi"
    assert replicas["ehi+faiss-ivf"] == res / "seed~1" / "ehi"
    assert trained_builds.tree_variants(res, seed=1) == {"ehi+tree": "seed~1", "ehi+tree-pq": "seed~1"}

    out = tmp_path / "bench" / "trained"
    named = [arg for name, variant in trees.items() for arg in ("--tree", f"{name}={variant}")]
    trained.main([str(res), str(out), "--rounds", "1", "--n-latency", "3", "--note", "a loaded machine", *named])
    curves = pd.read_parquet(out / "trained_curves.parquet")
    assert set(curves.system) == set(folders)
    table = pd.read_parquet(out / "trained_matched.parquet")
    pairs = set(zip(table.ehi, table.peer))
    assert {("ehi+tree", "ehi+faiss-hnsw"), ("ehi-floor+tree", "ehi+faiss-hnsw"),
            ("ehi+tree-pq", "ehi+faiss-ivfpq")} <= pairs
    assert not {e for e, _ in pairs} & peers  # a peer named ehi+ is still a peer
    frac = pd.read_parquet(out / "trained_fraction.parquet")
    assert set(frac.ehi) == {"ehi+tree", "ehi-floor+tree"} and set(frac.peer) == {"ehi+faiss-ivf", "ehi+faiss-ivf-L9"}
    same = frac[frac.peer == "ehi+faiss-ivf-L9"]  # as many lists as leaves: the fractions meet
    assert same.p99_ratio.notna().any()
    assert (frac.p99_ratio.dropna() > 0).all()
    text = (out / "trained.md").read_text()
    assert "ehi-floor+tree / ehi+faiss-hnsw QPS at equal k-NN recall@10" in text and "equal fraction scored" in text
    assert "a loaded machine" in text
    section = "".join(report.trained_section(tmp_path / "bench"))  # the summary's section 9
    assert section.startswith("\n## 9.") and "\n### EHI / peer at equal nDCG@10" in section


def test_trees_given_by_flag_replace_discovery(tmp_path, tiny_dataset):
    res = tmp_path / "res"
    _artefacts(res, tiny_dataset, ("main/ehi", f"{FLOOR}/ehi"))
    folders = trained.discover(res, trees={"ehi-floor+tree": FLOOR}, peer_encoder="ehi")
    assert [n for n in folders if not n.startswith("ehi+")] == ["ehi-floor+tree"]
    assert "ehi+tree" not in folders and "ehi+faiss-hnsw" in folders
    # the controls take the leaf count of whichever tree is timed, not only ehi+tree's
    assert "ehi+faiss-ivf-L9" in folders and "ehi+ivf-lists-pq" not in folders
    compressed = trained.discover(res, trees={"ehi-floor+tree-pq": FLOOR}, peer_encoder="ehi")
    assert {"ehi+faiss-ivf-L9", "ehi+ivf-lists-pq"} <= set(compressed)


@pytest.mark.integration  # the trained benchmark run end to end
def test_fixed_lists_both_metrics_thread_counts_and_costs(tmp_path, tiny_dataset):
    """At scale: the peers' lists fixed (no dev grid), matched on nDCG@10, Recall@10 and k-NN recall@10 with each
    thread count, the sweep cut past a fraction, and every system's build cost recorded, a tree's
    training job read from the Snakemake benchmark file its rule writes."""
    res, logs = tmp_path / "res", tmp_path / "logs"
    _artefacts(res, tiny_dataset, ("main/ehi", f"{FLOOR}/ehi"))
    (logs / FLOOR / "benchmarks").mkdir(parents=True)
    (logs / FLOOR / "benchmarks" / "train_ehi.tsv").write_text("s\th:m:s\tmax_rss\n12.5\t0:00:12\t321.0\n")
    out = tmp_path / "out"
    trained.main([str(res), str(out), "--rounds", "1", "--n-latency", "2", "--threads", "1", "2", "--lists", "4",
                  "--hnsw-m", "8", "--max-frac", "0.5", "--tree", f"ehi-floor+tree={FLOOR}", "--peer-encoder", "ehi",
                  "--logs", str(logs)])
    curves = pd.read_parquet(out / "trained_curves.parquet")
    assert set(curves.threads) == {1, 2} and (curves.n_docs == len(tiny_dataset.corpus)).all()
    for _, c in curves[curves.threads == 1].groupby("system"):  # at most one point past the cut
        assert (c.sort_values("budget_value").frac_scored.iloc[:-1] <= 0.5).all()
    table = pd.read_parquet(out / "trained_matched.parquet")
    assert set(table.metric) == {"ndcg@10", "recall@10", "knn_recall@10"} and set(table.threads) == {1, 2}
    cost = pd.read_parquet(out / "trained_costs.parquet").set_index("system")
    assert set(cost.index) == set(curves.system) and (cost.build_s > 0).all()
    assert cost.loc["ehi-floor+tree", "train_s"] == 12.5 and cost.loc["ehi-floor+tree", "train_max_rss_mb"] == 321.0
    assert cost.drop(index="ehi-floor+tree").train_s.isna().all()  # a peer's training is its build
    text = (out / "trained.md").read_text()
    assert "with 2 thread(s)" in text and "What each costs" in text


@pytest.mark.integration  # the trained benchmark run end to end
def test_groups_are_built_and_timed_apart_with_the_same_answers(tmp_path, tiny_dataset):
    """--group builds, times and frees its systems before the rest: the same curves' quality as one
    group, every system once, and exact search's answer shared across groups."""
    res = tmp_path / "res"
    _artefacts(res, tiny_dataset, ("main/ehi", f"{FLOOR}/ehi"))
    folders = trained.discover(res, trees={"ehi-floor+tree": FLOOR}, peer_encoder="ehi")
    folders = {n: folders[n] for n in ("ehi-floor+tree", "ehi+faiss-ivf", "ehi+scann")}
    quality = ["system", "budget_value", "frac_scored", "ndcg@10", "recall@100", "exact_recall@100", "knn_recall@10"]
    together = trained.run(res, folders, rounds=1, n_latency=2, settings=SearchConfig(ivf_nlist=[4], scann_leaves=[4]))
    apart = trained.run(res, folders, rounds=1, n_latency=2, settings=SearchConfig(ivf_nlist=[4], scann_leaves=[4]),
                        groups=[["ehi+scann"], ["ehi-floor+tree", "not-a-system"]])
    assert list(dict.fromkeys(apart.system)) == ["ehi+scann", "ehi-floor+tree", "ehi+faiss-ivf"]
    key = ["system", "budget_value"]
    pd.testing.assert_frame_equal(together[quality].sort_values(key).reset_index(drop=True),
                                  apart[quality].sort_values(key).reset_index(drop=True))


@pytest.mark.parametrize("flags, says", [
    (["--group", "ehi+faiss-ivf", "--group", "ehi+faiss-ivf", "ehi+scann"], "'ehi+faiss-ivf' is in group 1 and group 2"),
    (["--group", "ehi+nosuch"], "'ehi+nosuch' is not a system of this run"),
    (["--systems", "ehi+tree", "ehi+nosuch"], "--systems ehi+nosuch: not a system of this run"),
    (["--tree", "ehi-floor+tree=nosuchvariant"], "--tree ehi-floor+tree=nosuchvariant: no trained index"),
    (["--tree", "floor"], "is not NAME=VARIANT"),
    (["--max-frac", "0"], "not a fraction > 0"), (["--max-frac", "nan"], "not a fraction > 0"),
    (["--hnsw-m", "0"], "0 is below 2"), (["--lists", "0"], "0 is below 1"), (["--rounds", "0"], "0 is below 1"),
    (["--threads", "two"], "'two' is not an integer"), (["--seed", "-1"], "-1 is below 0"),
    (["--max-frac", "2"], "not a fraction > 0 and <= 1"), (["--logs", "/no/such"], "--logs /no/such: not a directory"),
    (["--peer-encoder", "de"], "--peer-encoder: de+faiss-ivf has no emb/corpus.npy"),  # was a report without peers
    (["--seed", "5"], "--seed: ehi+faiss-ivf has no emb/corpus.npy"),  # was an AttributeError
])
def test_a_bad_flag_is_refused_in_one_line_before_anything_is_built(tmp_path, tiny_dataset, capsys, flags, says):
    res = tmp_path / "res"
    _artefacts(res, tiny_dataset, ("main/ehi",))
    with pytest.raises(SystemExit) as exit_:
        trained.main([str(res), str(tmp_path / "out"), "--peer-encoder", "ehi", *flags])
    assert exit_.value.code == 2 and not (tmp_path / "out").exists()
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert says in error, error


@pytest.mark.integration  # the trained benchmark run end to end
def test_a_report_that_fails_midway_leaves_the_previous_one_whole(tmp_path, tiny_dataset, monkeypatch):
    res, out = tmp_path / "res", tmp_path / "out"
    _artefacts(res, tiny_dataset, ("main/ehi",))
    args = [str(res), str(out), "--rounds", "1", "--n-latency", "2", "--peer-encoder", "ehi", "--lists", "4"]
    trained.main(args)
    before = {p.name: p.read_bytes() for p in sorted(out.iterdir())}

    def killed(*_args, **_kw):
        raise RuntimeError("killed while drawing")

    monkeypatch.setattr(trained.report, "pareto_figure", killed)  # benchmarks.trained_report
    with pytest.raises(RuntimeError, match="killed"):
        trained.main([*args, "--note", "a second run"])
    assert {p.name: p.read_bytes() for p in sorted(out.iterdir())} == before


@pytest.mark.integration  # the trained benchmark run end to end
def test_the_peers_are_tuned_on_dev_by_the_cost_given(tmp_path, tiny_dataset, monkeypatch):
    """--budget-cost work: the peers' dev tuning reads work (routing counted), as a run with
    search.budget_cost: work tunes them; without it, documents scored."""
    res = tmp_path / "res"
    _artefacts(res, tiny_dataset, ("main/ehi",))
    costs, tune_on_dev = [], trained_builds.tune_on_dev

    def tune(*args, **kwargs):
        costs.append(kwargs["cost"])
        return tune_on_dev(*args, **kwargs)

    monkeypatch.setattr(trained_builds, "tune_on_dev", tune)
    common = ["--rounds", "1", "--n-latency", "2", "--systems", "ehi+faiss-ivf", "--lists", "2", "4"]
    trained.main([str(res), str(tmp_path / "work"), *common, "--budget-cost", "work"])
    trained.main([str(res), str(tmp_path / "documents"), *common])
    assert costs == ["work", "documents"]


@pytest.mark.integration  # the trained benchmark run end to end
def test_every_build_of_each_peers_grid_is_one_curve_with_its_costs_and_the_machine_named(tmp_path, tiny_dataset):
    """--every-build: HNSW at M 8 and 16, ScaNN-AH at each leaf count with and without reordering,
    IVF and IVF-PQ fast scan (re-ranked) at each list count, each build swept and timed in every
    round; a system stays one curve (its Pareto front drawn as one line), each build's cost, bytes
    on disk included, is a row; the report names the machine."""
    res, out = tmp_path / "res", tmp_path / "out"
    _artefacts(res, tiny_dataset, ("main/ehi",))
    trained.main([str(res), str(out), "--rounds", "3", "--n-latency", "2", "--peer-encoder", "ehi", "--lists", "2", "4",
                  "--hnsw-m", "8", "16", "--every-build", "--tree", "ehi+tree=main", "--tree", "ehi+tree-pq=main",
                  "--systems", "ehi+tree", "ehi+tree-pq", "ehi+faiss-hnsw", "ehi+scann-ah", "ehi+faiss-ivfpq",
                  "ehi+ivf-lists-pq"])
    curves = pd.read_parquet(out / "trained_curves.parquet")
    builds = curves.groupby("system").build.nunique()
    assert builds["ehi+faiss-hnsw"] == 2 and builds["ehi+scann-ah"] == 4 and builds["ehi+faiss-ivfpq"] == 2
    assert builds["ehi+tree"] == builds["ehi+ivf-lists-pq"] == 1 and (curves.rounds == 3).all()
    hnsw_m = {json.loads(b)["M"] for b in curves[curves.system == "ehi+faiss-hnsw"].build}
    assert hnsw_m == {8, 16}
    assert {json.loads(b)["rerank"] for b in curves[curves.system == "ehi+faiss-ivfpq"].build} == {1000}
    cost = pd.read_parquet(out / "trained_costs.parquet")
    assert len(cost) == curves[["system", "build"]].drop_duplicates().shape[0] and (cost.index_bytes > 0).all()
    tree_bytes = cost.set_index("system").loc["ehi+tree", "index_bytes"]
    assert tree_bytes >= (res / "main" / "ehi" / "index" / "index.faiss").stat().st_size  # the export, as written
    table = pd.read_parquet(out / "trained_matched.parquet")
    assert ("ehi+tree-pq", "ehi+ivf-lists-pq") in set(zip(table.ehi, table.peer))
    assert table.groupby(["ehi", "peer", "metric", "threads", "target_share"]).size().eq(1).all()  # one line a system
    text = (out / "trained.md").read_text()
    assert "Machine: " in text and "logical cores" in text and "every build of each peer's grid" in text
    assert "index_bytes" in text and "| build " in text


def test_the_pareto_figure_names_each_trees_line_and_draws_one_line_a_system():
    """ann-benchmarks' figure: log QPS against the quality axis, one line a system (its front over
    every build), the trees' lines named beside them, peers only in the legend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from benchmarks.trained_report import _pareto_row

    curves = pd.DataFrame({"system": ["ehi+tree"] * 3 + ["ehi+faiss-hnsw"] * 4,
                           "build": [""] * 3 + ['{"M": 16}'] * 2 + ['{"M": 32}'] * 2,
                           "ndcg@10": [0.1, 0.2, 0.3, 0.15, 0.25, 0.2, 0.3], "qps": [900, 500, 100, 800, 300, 700, 90]})
    fig, axes = plt.subplots(1, 2)
    _pareto_row(axes, curves, "ndcg@10", 0.5)
    assert [t.get_text() for t in axes[0].texts] == ["ehi+tree"]
    assert [line.get_label() for line in axes[0].lines] == ["ehi+tree", "ehi+faiss-hnsw"]
    hnsw = axes[0].lines[1]  # the front over both degrees: M 16 at 0.15 and 0.25, M 32 at 0.2 and 0.3
    assert list(hnsw.get_xdata()) == [0.15, 0.2, 0.25, 0.3] and axes[0].get_yscale() == "log"
    plt.close(fig)
