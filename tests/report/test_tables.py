"""ehi.report.tables: the KMR, leaf-balance and ablation tables, from hand-made frames and from
the committed results of the synthetic default (whose rendered CSV must come out again)."""

import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from ehi.core.io import read_table
from ehi.report.tables import (ABLATION_BUDGET, ReportInputs, ReportSettings, ablation_table, kmr_wide, leaf_balance,
                               tree_warnings)

REPO = Path(__file__).resolve().parents[2]
SYSTEMS = ("ehi+tree", "ehi+exact")  # the config's default ablation_systems


def report(results, dataset, variants, ablations, metrics, targets, tables, figures, **settings):
    """build_report over a results folder, with the inputs rule tables would declare there."""
    from ehi.report.tables import build_report

    chosen = ReportSettings(dataset, tuple(variants), ablations, tuple(metrics), tuple(targets), SYSTEMS, **settings)
    build_report(ReportInputs.of_results(results, variants), chosen, tables, figures)


def summary(system, points, metric="ndcg@10", variant="main"):
    """A summary frame of one system: (frac_visited, value) per budget."""
    return pd.DataFrame([{"dataset": "d", "system": system, "variant": variant, "budget_param": "p",
                          "budget_value": float(i), "frac_visited": f, "metric": metric, "value": v, "qps": 1.0}
                         for i, (f, v) in enumerate(points)])


def test_kmr_wide_reads_the_largest_budget_not_above_each_target():
    table = kmr_wide(pd.concat([summary("a", [(0.01, 0.1), (0.04, 0.3), (1.0, 0.9)]),
                                summary("b", [(0.5, 0.5), (1.0, 0.8)])]), ["ndcg@10"], [0.02, 0.05, 1.0])
    assert list(table.columns) == ["metric", "system", "2%", "5%", "100%"]
    a = table.set_index("system").loc["a"]
    assert (a["2%"], a["5%"], a["100%"]) == (0.1, 0.3, 0.9)
    b = table.set_index("system").loc["b"]
    assert np.isnan(b["2%"]) and np.isnan(b["5%"]) and b["100%"] == 0.8  # nothing that cheap: NaN


def test_leaf_balance_and_warnings_flag_a_collapsed_tree():
    leaves = {"main": pd.DataFrame({"size": [10, 11, 9, 10]}), "bad": pd.DataFrame({"size": [40, 0, 0, 0]})}
    table = leaf_balance(leaves).set_index("variant")
    assert table.loc["main", "status"] == "ok" and table.loc["main", "empty"] == 0
    assert table.loc["bad", "empty"] == 3 and table.loc["bad", "max"] == 40
    warnings = tree_warnings(leaves)
    assert list(warnings) == ["bad"] and warnings["bad"].startswith("EHI's tree (bad) has collapsed")


def test_ablation_table_has_a_row_per_variant_main_first():
    def variant(name, tree, exact):
        return pd.concat([summary("ehi+tree", [(ABLATION_BUDGET / 2, tree), (1.0, exact)], variant=name),
                          summary("ehi+exact", [(1.0, exact)], variant=name)])

    summaries = {"main": variant("main", 0.2, 0.6), "height~1": variant("height~1", 0.3, 0.5)}
    table = ablation_table(summaries, {"shape": ["height~1", "height~9"]}, ["ndcg@10"], SYSTEMS)
    assert table.variant.tolist() == ["main", "height~1"]  # a variant without results is left out
    assert table["tree ndcg@10 @10%"].tolist() == [0.2, 0.3]
    assert table["exact ndcg@10"].tolist() == [0.6, 0.5]


def test_the_committed_kmr_table_comes_out_of_the_committed_summaries():
    """The embedded default runs three training seeds: its KMR table is the seed mean ± sd of the
    committed per-seed summaries (main, seed~1, seed~2), its variant systems (the floor recipe)
    taken from their variant's replica of the same seed."""
    from ehi.evaluate.seeds import setting_replicas
    from ehi.evaluate.variant_systems import config_variant_paths, parse
    from ehi.report.seed_tables import kmr_over_seeds_wide, seeded_main_summary

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    specs = parse(config_variant_paths(config, REPO / "workflow" / "schemas" / "config.schema.yaml"))
    results = REPO / "results" / "synthetic"
    committed = pd.read_csv(REPO / "results" / "tables" / "synthetic_kmr.csv")
    metrics = list(dict.fromkeys(committed.metric))
    targets = [float(c.rstrip("%")) / 100 for c in committed.columns[3:]]
    seeded = seeded_main_summary(results, setting_replicas(specs, [0, 1, 2], 0), specs)
    assert {"ehi-floor+tree", "ehi+tree"} <= set(seeded.system)
    assert sorted(seeded.seed.unique()) == [0, 1, 2]
    table, _ = kmr_over_seeds_wide(seeded, metrics, targets)
    pd.testing.assert_frame_equal(table.reset_index(drop=True).fillna("–"), committed.fillna("–"), check_dtype=False)


def test_a_variant_system_joins_the_main_kmr_table_with_its_variants_numbers(tmp_path):
    """evaluation.variant_systems on the committed SciFact results: the k-means-started tree's rows in
    the main KMR table are the stabiliser variant's ehi+tree rows, the main systems' are unchanged."""
    results = REPO / "results" / "scifact"
    variants = ["main", "indexer_init~kmeans"]
    report(results, "scifact", variants, {"stabiliser": ["indexer_init~kmeans"]}, ["ndcg@10"], [0.05, 0.1, 1.0],
                 tmp_path / "tables", tmp_path / "figures",
                 variant_systems={"ehi-warm+tree": "indexer_init~kmeans/ehi+tree"},
                 ablation_rows={"stabiliser": [{"indexer_init": "kmeans"}]})
    table = pd.read_csv(tmp_path / "tables" / "scifact_kmr.csv").set_index("system")
    variant = kmr_wide(read_table(results / variants[1] / "summary.parquet", "summary"), ["ndcg@10"], [0.05, 0.1, 1.0])
    main = kmr_wide(read_table(results / "main" / "summary.parquet", "summary"), ["ndcg@10"], [0.05, 0.1, 1.0])
    warm = table.loc["ehi-warm+tree"]
    expected = variant.set_index("system").loc["ehi+tree"]
    np.testing.assert_allclose(warm[["5%", "10%", "100%"]].astype(float), expected[["5%", "10%", "100%"]].astype(float))
    pd.testing.assert_frame_equal(table.drop(index="ehi-warm+tree").reset_index()[main.columns],
                                  main.reset_index(drop=True), check_dtype=False)
    assert (tmp_path / "figures" / "kmr_ndcg_at_10.png").stat().st_size > 0


def test_the_seed_figure_draws_seeds_that_agree(tmp_path):
    """Three seeds with one value (a system no seed changes, e.g. IVF on a frozen encoder): the mean
    may round outside [min, max], and the figure still draws (zero-length bars)."""
    from ehi.report.seed_tables import kmr_over_seeds_wide, plot_kmr_over_seeds

    value = 0.1  # pandas: the mean of three 0.1 is 0.1 + 1.4e-17, above the max
    rows = [{"dataset": "d", "system": "ehi+faiss-ivf", "variant": "main", "budget_param": "nprobe", "budget_value": 1.0,
             "frac_visited": 0.05, "metric": "ndcg@10", "value": value, "qps": 1.0, "seed": seed} for seed in (0, 1, 2)]
    _, long = kmr_over_seeds_wide(pd.DataFrame(rows), ["ndcg@10"], [0.05, 0.1])
    path = plot_kmr_over_seeds(long, "ndcg@10", tmp_path / "seeds.png")
    assert Path(path).read_bytes()[:4] == b"\x89PNG"


def _tampered_summary(change):
    def tamper(path):
        frame = read_table(path, "summary")
        change(frame).to_parquet(path)
    return tamper


@pytest.mark.parametrize("change, said", [
    (lambda f: f.assign(value=np.where(f.metric == "ndcg@10", np.nan, f.value)), "NaN value(s), first at dataset=scifact"),
    (lambda f: pd.concat([f, f.iloc[:3]]), "6 rows repeat a key, first dataset=scifact, system="),
    (lambda f: f.iloc[:0], "a summary table without rows"),
    (lambda f: f.assign(value=np.where(f.metric == "ndcg@10", -5.0, f.value)), "impossible metric value(s), first -5.0"),
    (lambda f: f.assign(value=np.where(f.metric == "ndcg@10", 7.0, f.value)), "<= 1 for ndcg@10"),
    (lambda f: f.assign(value=np.where(f.metric.str.startswith("recall"), np.inf, f.value)), "first inf"),
    (lambda f: f.assign(frac_visited=np.nan), "frac_visited nan"),
    (lambda f: f.assign(dataset="fiqa"), "rows of dataset 'fiqa', in the results of 'scifact'"),
    (lambda f: f.assign(frac_visited=np.where(f.system == "ehi+tree", 1.5, f.frac_visited)), "frac_visited 1.5"),
])
def test_the_report_refuses_a_summary_with_nan_metrics_repeated_keys_or_no_rows(tmp_path, change, said):
    """A NaN metric would render as the mark of a budget not reached, a repeated row as a second
    value: refused, naming the file, before anything is rendered."""
    from ehi.core.errors import DataError

    results = tmp_path / "scifact"
    shutil.copytree(REPO / "results" / "scifact", results)
    _tampered_summary(change)(results / "main" / "summary.parquet")
    with pytest.raises(DataError) as err:
        report(results, "scifact", ["main"], {}, ["ndcg@10"], [0.1], tmp_path / "tables", tmp_path / "figures")
    assert str(err.value).startswith(f"{results / 'main' / 'summary.parquet'}: ") and said in str(err.value)
    assert not (tmp_path / "tables").exists() or not any((tmp_path / "tables").iterdir())


@pytest.mark.slow  # a kill loop
def test_a_report_killed_at_a_random_moment_leaves_each_table_whole_and_the_figures_one_set(tmp_path):
    """kill -9 of the report at a random moment, over the tables and figures of an earlier render:
    each table is the earlier one or the new one, byte for byte, the figures are the one set or the
    other, and a rerun gives what an uninterrupted render gives."""
    import os
    import signal
    import subprocess
    import sys
    import time

    def command(out, targets):
        code = (f"import sys; sys.path.insert(0, {str(REPO)!r}); from tests.report.test_tables import report; "
                f"report({str(REPO / 'results' / 'scifact')!r}, 'scifact', ['main'], {{}}, ['ndcg@10'], "
                f"{targets!r}, {str(out / 'tables')!r}, {str(out / 'figures')!r})")
        return [sys.executable, "-c", code]

    def files(folder):
        return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if not p.name.startswith(".")}

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    new = [0.05, 0.1, 1.0]
    subprocess.run(command(tmp_path / "reference", new), check=True, env=env, capture_output=True)
    subprocess.run(command(tmp_path / "out", [0.1]), check=True, env=env, capture_output=True)  # the earlier render
    reference = {kind: files(tmp_path / "reference" / kind) for kind in ("tables", "figures")}
    earlier = {kind: files(tmp_path / "out" / kind) for kind in ("tables", "figures")}
    assert earlier["tables"] != reference["tables"]
    delay = np.random.default_rng(int(time.time())).uniform(0.5, 9.0)
    job = subprocess.Popen(command(tmp_path / "out", new), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(delay)
    job.send_signal(signal.SIGKILL)
    job.wait()
    # killed between atomic_dir's two renames, the earlier figures wait aside for the next write
    aside = tmp_path / "out" / (".figures.old" if not (tmp_path / "out" / "figures").exists() else "figures")
    now = {"tables": files(tmp_path / "out" / "tables"), "figures": files(aside)}
    for name, data in now["tables"].items():
        assert data in (earlier["tables"].get(name), reference["tables"].get(name)), f"{name}, killed after {delay:.1f} s"
    assert now["figures"] in (earlier["figures"], reference["figures"]), f"killed after {delay:.1f} s"
    subprocess.run(command(tmp_path / "out", new), check=True, env=env, capture_output=True)
    assert {kind: files(tmp_path / "out" / kind) for kind in ("tables", "figures")} == reference


def test_rows_of_a_system_the_config_does_not_list_are_left_out_with_a_note(tmp_path, caplog):
    """Cached results of a system since dropped from search.systems (a report-only rerun): not
    rendered as if the config asked for it; the KMR table and the log say which were left out."""
    results = REPO / "results" / "scifact"
    listed = ("de+exact", "ehi+tree", "ehi+exact")
    report(results, "scifact", ["main"], {}, ["ndcg@10"], [0.1], tmp_path / "tables", tmp_path / "figures",
           systems=listed)
    kmr = pd.read_csv(tmp_path / "tables" / "scifact_kmr.csv")
    assert set(kmr.system) == set(listed)
    sig = pd.read_csv(tmp_path / "tables" / "scifact_significance.csv")
    assert set(sig.system_a) | set(sig.system_b) <= set(listed) and len(sig)
    note = "which this config does not list (search.systems, evaluation.variant_systems): left out of the tables"
    assert "de+faiss-ivf" in (tmp_path / "tables" / "scifact_kmr.md").read_text() and note in caplog.text


@pytest.mark.parametrize("change, said", [
    (lambda f: f.assign(p_adjusted=2.0), "impossible p_adjusted value(s), first 2.0"),
    (lambda f: f.assign(mean_a=np.where(f.metric == "ndcg@10", 7.0, f.mean_a)), "impossible mean_a value(s), first 7.0"),
    (lambda f: f.assign(dataset="fiqa"), "rows of dataset 'fiqa', in the results of 'scifact'"),
])
def test_the_report_refuses_a_significance_table_with_impossible_values(tmp_path, change, said):
    """Rendered as they were, with exit 0: a p-value of 2, a mean nDCG@10 of 7, another dataset's tests."""
    from ehi.core.errors import DataError

    results = tmp_path / "scifact"
    shutil.copytree(REPO / "results" / "scifact", results)
    frame = read_table(results / "significance.parquet")
    change(frame).to_parquet(results / "significance.parquet")
    with pytest.raises(DataError, match=re.escape(said)):
        report(results, "scifact", ["main"], {}, ["ndcg@10"], [0.1], tmp_path / "tables", tmp_path / "figures")
    assert not (tmp_path / "tables").exists() or not any((tmp_path / "tables").iterdir())
