"""Workflow tests: lint, dry runs of the named targets, and the test config end to end.

Runs happen in a temporary working directory (``--directory``), never in the checkout.
"""

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml

from digests import LIBRARIES, environment, load_golden, mismatches, result_tables, run_digests, run_tables  # tests/workflow/digests.py

from ehi.core.schemas import schema

REPO = Path(__file__).resolve().parents[2]
SNAKEMAKE = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile")]
TEST_CONFIG = str(REPO / "config" / "test" / "test.yaml")


def snakemake(*args, workdir, check=True, timeout=900):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    proc = subprocess.run([*SNAKEMAKE, "--directory", str(workdir), *args], capture_output=True, text=True,
                          env=env, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc


def jobs_of(dry_run_output: str) -> set[str]:
    """Rule names a dry run schedules (from its job-stats table)."""
    lines = dry_run_output.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("job ")), None)
    if start is None:
        return set()
    names = set()
    for line in lines[start + 2 :]:
        parts = line.split()
        if not parts or parts[0] == "total":
            break
        names.add(parts[0])
    return names


def test_lint(tmp_path):
    proc = snakemake("--lint", workdir=tmp_path, check=False)
    assert "Congratulations" in proc.stdout + proc.stderr, proc.stdout + proc.stderr


@pytest.mark.parametrize("target", ["all", "data", "train_all", "main", "tables"])
def test_dry_run_of_named_targets(tmp_path, target):
    proc = snakemake("-n", target, workdir=tmp_path)
    assert "dry-run" in (proc.stdout + proc.stderr).lower()


def test_unknown_config_key_stops_before_any_job(tmp_path):
    proc = snakemake("-n", "--config", "trian={}", workdir=tmp_path, check=False)
    assert proc.returncode != 0
    assert "trian" in proc.stdout + proc.stderr


def test_bad_value_names_the_key(tmp_path):
    proc = snakemake("-n", "--config", "train={'height': 0}", "--configfile", TEST_CONFIG, workdir=tmp_path, check=False)
    assert proc.returncode != 0
    assert "height" in proc.stdout + proc.stderr


def test_one_ablation_target_schedules_only_its_variants(tmp_path):
    # targets before --configfile, which takes every following word as a config file
    proc = snakemake("-n", "ablation_tree_shape", "--configfile", TEST_CONFIG, workdir=tmp_path)
    out = proc.stdout + proc.stderr
    assert "height~1" in out
    assert "lambda_indexing~0" not in out  # another ablation's variant
    assert "de/train" not in out  # no baseline training for an EHI ablation


def test_data_target_of_the_default_config_writes_its_three_tables(tmp_path):
    snakemake("data", "--cores", "2", workdir=tmp_path)  # no --configfile: the embedded default
    for kind in ("corpus", "queries", "qrels"):
        path = tmp_path / "resources" / "synthetic" / "data" / f"{kind}.parquet"
        assert pq.read_schema(path).remove_metadata().equals(schema(kind)), kind
    n_docs = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["dataset"]["synthetic"]["n_docs"]
    assert pq.read_metadata(tmp_path / "resources" / "synthetic" / "data" / "corpus.parquet").num_rows == n_docs


@pytest.fixture(scope="module")
def test_run(test_config_run):
    """The whole DAG on the test config (tiny random encoder): the session's one run (tests/conftest.py)."""
    return test_config_run.workdir


def test_data_stage_writes_the_three_tables_in_their_schemas(test_run):
    for kind in ("corpus", "queries", "qrels"):
        path = test_run / "resources" / "test" / "data" / f"{kind}.parquet"
        assert pq.read_schema(path).remove_metadata().equals(schema(kind)), kind


def test_end_to_end_writes_results_tables_and_figures(test_run):
    summary = pd.read_parquet(test_run / "results" / "test" / "main" / "summary.parquet")
    assert {"de+exact", "ehi+tree", "ehi+exact", "de+faiss-ivf", "de+scann"} <= set(summary.system)
    assert summary.frac_visited.between(0, 1).all()
    log = pd.read_parquet(test_run / "results" / "test" / "main" / "train_log" / "ehi.parquet")
    assert "loss" in log and "seconds" not in log  # wall clock stays out of results: it changes every run
    tables = test_run / "results" / "tables"
    for name in ("kmr", "significance", "ablations", "leaf_balance", "timings"):
        for suffix in (".md", ".tex", ".csv"):
            assert (tables / f"test_{name}{suffix}").stat().st_size > 0
    figures = sorted(p.name for p in (test_run / "results" / "figures" / "test").glob("*.png"))
    assert "leaf_sizes.png" in figures and "training.png" in figures and any(f.startswith("kmr_") for f in figures)
    assert {"ablation_tree_shape.png", "ablation_loss_terms.png"} <= set(figures)
    # every ablation variant is paired with the main setting at exact search, p-values in [0, 1]
    sig = pd.read_csv(tables / "test_ablation_significance.csv")
    exact = sig[sig.search == "exact"]
    assert set(exact.variant) == {"height~1/branching~8", "lambda_indexing~0.0"}
    assert len(exact) == 2 * 4  # one row per variant and metric (the default's four)
    assert exact[["p_adj t-test", "p_adj randomization"]].stack().between(0, 1).all()


def test_the_trained_index_answers_ehi_search(test_run, capsys):
    from ehi.serve.cli import main

    index_dir = test_run / "resources" / "test" / "main" / "ehi" / "search_index"
    main(["search", "--index", str(index_dir), "--query", "a query about anything", "--beam", "2", "-k", "3"])
    import re

    out = capsys.readouterr().out
    assert len(set(re.findall(r"\bd\d+\b", out))) == 3  # three ranked synthetic doc ids (d<number>)
    main(["info", "--index", str(index_dir)])
    assert "leaves" in capsys.readouterr().out.lower()


def test_trec_run_files_with_their_qrels_give_the_per_query_ndcg(test_run):
    import ir_measures

    trec = test_run / "resources" / "test" / "main" / "runs" / "trec"
    qrels = list(ir_measures.read_trec_qrels(str(trec / "ehi+tree" / "qrels.txt")))  # written beside the runs
    per_query = pd.read_parquet(test_run / "results" / "test" / "main" / "per_query" / "ehi+tree.parquet")
    assert {q.query_id for q in qrels} == set(per_query.query_id)  # the queries the pipeline averages over
    files = sorted((trec / "ehi+tree").glob("beam=*.trec"))
    assert len(files) == per_query.budget_value.nunique() and len(list(trec.iterdir())) == 8  # every system
    for path in files:
        want = per_query[(per_query.metric == "ndcg@10") & (per_query.budget_value == float(path.stem[5:]))]
        got = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.nDCG @ 10], qrels,
                                                                   ir_measures.read_trec_run(str(path)))}
        assert [got.get(q, 0.0) for q in want.query_id] == pytest.approx(want.value.tolist(), abs=1e-12)


def test_trec_eval_with_c_on_the_runs_gives_the_pipelines_summary(test_run):
    """trec_eval's own code (pytrec_eval) on every system's TREC files and the qrels beside them:
    the mean over every qrels query (trec_eval -c, 0 for a query the run lacks) is the summary's
    nDCG@10 at that budget; without -c (mean over the run's queries) it is not, where a judged query
    retrieved nothing."""
    import pytrec_eval

    trec = test_run / "resources" / "test" / "main" / "runs" / "trec"
    summary = pd.read_parquet(test_run / "results" / "test" / "main" / "summary.parquet")
    summary = summary[summary.metric == "ndcg@10"]
    checked = left_out = 0
    for folder in sorted(trec.iterdir()):
        qrels = {}
        for line in (folder / "qrels.txt").read_text().splitlines():
            query, _, doc, relevance = line.split()
            qrels.setdefault(query, {})[doc] = int(relevance)
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"})
        for path in sorted(folder.glob("*.trec")):
            run = {}
            for line in path.read_text().splitlines():
                query, _, doc, _, score, _ = line.split()
                run.setdefault(query, {})[doc] = float(score)
            per_query = [m["ndcg_cut_10"] for m in evaluator.evaluate(run).values()]
            param, value = path.stem.split("=")
            want = summary[(summary.system == folder.name) & (summary.budget_param == param)
                           & (summary.budget_value == float(value))].value
            assert len(want) == 1, (folder.name, path.name)
            assert sum(per_query) / len(qrels) == pytest.approx(want.iloc[0], abs=1e-9), (folder.name, path.name)
            checked += 1
            if len(per_query) < len(qrels):  # plain trec_eval: the run's queries only, higher
                left_out += 1
                assert sum(per_query) / len(per_query) > want.iloc[0] or want.iloc[0] == 0
    assert checked == summary.groupby(["system", "budget_value"]).ngroups and left_out > 0


def test_weights_and_indexes_are_readable_by_others(test_run):
    """The safetensors weights, indexes and trainer states get the mode of every other output, 0666
    less the umask (0644 under the usual 022), so a colleague on a shared file system loads them."""
    import stat

    umask = os.umask(0)
    os.umask(umask)
    weights = [p for suffix in ("*.safetensors", "*.faiss") for p in (test_run / "resources").rglob(suffix) if p.is_file()]
    assert {p.name for p in weights} >= {"model.safetensors", "index.faiss", "indexer.safetensors", "trainer_state.safetensors"}
    modes = {str(p.relative_to(test_run)): stat.S_IMODE(p.stat().st_mode) for p in weights}
    assert set(modes.values()) == {0o666 & ~umask}, {k: oct(v) for k, v in modes.items()}


def test_tables_with_results_missing_names_them_instead_of_failing(tmp_path):
    results = tmp_path / "results" / "test"
    (results / "main").mkdir(parents=True)
    pd.DataFrame(columns=schema("significance").names).to_parquet(results / "significance.parquet")
    proc = snakemake("-n", "tables", "--configfile", TEST_CONFIG, workdir=tmp_path)
    out = proc.stdout + proc.stderr
    # the report's own jobs only: the ablations' tests, which a report-only run makes from what is
    # cached when their table is missing, and the tables
    assert "MissingInputException" not in out and jobs_of(out) == {"ablation_significance", "tables"}
    assert "ablation_tree_shape" in out and "snakemake --cores N main --configfile" in out


def test_tables_rerun_from_cached_results_schedules_no_training(test_run, tmp_path):
    """A fresh clone has results/ but no resources/ and no .snakemake/: `tables` must not retrain."""
    import shutil

    shutil.copytree(test_run / "results" / "test", tmp_path / "results" / "test")
    # a checkout gives every file a fresh mtime in no particular order: upstream files may look newer
    for i, path in enumerate(sorted((tmp_path / "results").rglob("*"), reverse=True)):
        os.utime(path, (1_700_000_000 + i, 1_700_000_000 + i))
    proc = snakemake("-n", "tables", "--configfile", TEST_CONFIG, workdir=tmp_path)
    jobs = jobs_of(proc.stdout + proc.stderr)
    assert not jobs & {"train_ehi", "train_de", "embed", "search", "evaluate"}, jobs


def _assert_same_results(a: Path, b: Path) -> None:
    ta, tb = result_tables(a), result_tables(b)
    assert ta.keys() == tb.keys() and len(ta) > 10, sorted(set(ta) ^ set(tb))
    for name in ta:
        pd.testing.assert_frame_equal(ta[name], tb[name], check_exact=True, obj=name)


def test_determinism_same_config_and_seed_give_identical_parquet(test_run, tmp_path):
    """The test config's main results, run a second time in a fresh directory with the same cores, are
    bit-identical, trained weights and significance included. Not across thread counts: with one core
    instead of two (one torch thread in training) the per-query metrics, summary and significance stay
    identical but the weights, run scores and training losses differ in their last bits (12 of the
    golden's 24 digests), so the golden is recorded at two cores."""
    snakemake("main", "--cores", "2", "--configfile", TEST_CONFIG, workdir=tmp_path)
    _assert_same_results(test_run, tmp_path)
    assert run_digests(tmp_path) == run_digests(test_run)  # the trained weights and significance too


def test_golden_digest_holds_the_test_config_numbers(test_run):
    """The test config's main results and trained weights equal the golden's (tests/workflow/digests.py):
    bit for bit on the golden's kernels, to golden_tolerances' tolerances on any other CPU or kernel path.
    A change that moves a number fails here until its stage version is bumped and the golden updated.
    Only other library versions skip it: the CPU and its kernels never do."""
    golden = load_golden()
    libraries = {k: (golden["environment"].get(k), v) for k, v in environment().items()
                 if k in LIBRARIES and golden["environment"].get(k) != v}
    if libraries:
        pytest.skip(f"golden made with other library versions (golden, here): {libraries}")
    problems = mismatches(golden, run_digests(test_run), run_tables(test_run))
    assert not problems, "\n".join(problems)


def test_kill_mid_run_then_rerun_resumes_and_matches_an_uninterrupted_run(test_run, tmp_path):
    """SIGKILL the whole Snakemake process group once EHI's first epoch is checkpointed (training,
    or an encoding or search job running beside it, is cut mid-way); the rerun must finish and give
    the uninterrupted run's numbers."""
    import signal
    import time

    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    cmd = [*SNAKEMAKE, "--directory", str(tmp_path), "main", "--cores", "2", "--configfile", TEST_CONFIG]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True)
    marker = tmp_path / "resources" / "test" / "main" / "ehi" / "train" / "checkpoint" / "state.json"
    deadline = time.time() + 600
    while not marker.exists() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert marker.exists(), "the run ended before EHI's first checkpoint"
    assert not (tmp_path / "results" / "test" / "significance.parquet").exists()  # really cut short
    # what a user does after a kill: release Snakemake's lock, rerun (incomplete outputs are redone)
    snakemake("--unlock", "--cores", "2", "--configfile", TEST_CONFIG, workdir=tmp_path)
    proc = snakemake("main", "--cores", "2", "--rerun-incomplete", "--configfile", TEST_CONFIG, workdir=tmp_path)
    assert "resumed from" in (tmp_path / "logs" / "test" / "main" / "train_ehi.log").read_text() or \
        "Incomplete" in proc.stdout + proc.stderr or "incomplete" in proc.stdout + proc.stderr
    _assert_same_results(test_run, tmp_path)


def test_manifest_changed_prepared_data_stops_the_next_run_before_any_job(tmp_path):
    snakemake("data", "--cores", "1", "--configfile", TEST_CONFIG, workdir=tmp_path)
    data = tmp_path / "resources" / "test" / "data"
    assert (data / "manifest.json").exists()
    (data / "qrels.parquet").write_bytes((data / "qrels.parquet").read_bytes() + b"\0")  # a changed copy
    proc = snakemake("train_all", "--cores", "1", "--configfile", TEST_CONFIG, workdir=tmp_path, check=False)
    assert proc.returncode != 0
    assert "changed since it was prepared" in proc.stderr and "qrels.parquet" in proc.stderr
    assert not (tmp_path / "resources" / "test" / "main").exists()  # no job ran


def _reversed_keys(value, keep_order=("ablations",)):
    """The config with every mapping's keys in reverse order (the ablation tables keep theirs: their
    order is the report's row order, so it is content, not layout)."""
    if not isinstance(value, dict):
        return value
    items = list(value.items())
    return {k: (v if k in keep_order else _reversed_keys(v, keep_order)) for k, v in reversed(items)}


def test_regenerated_results_render_the_tables_again(test_run):
    """`all` after a result was regenerated re-renders the tables and claims that read it (an
    ancient() input once left them stale while every result under them had been regenerated)."""
    proc = snakemake("-n", "all", "--forcerun", "significance", "--configfile", TEST_CONFIG, workdir=test_run)
    jobs = jobs_of(proc.stdout + proc.stderr)
    assert {"significance", "tables", "claims"} <= jobs, jobs
    assert not jobs & {"train_ehi", "train_de", "embed", "search", "evaluate"}, jobs


def test_reordered_config_keys_rerun_nothing(test_run, tmp_path):
    """Rule params carry config sections with sorted keys (ehi.core.config.canonical)."""
    import yaml

    config = yaml.safe_load(Path(TEST_CONFIG).read_text())
    reordered = tmp_path / "reordered.yaml"
    reordered.write_text(yaml.safe_dump(_reversed_keys(config), sort_keys=False))
    assert list(yaml.safe_load(reordered.read_text())) == list(reversed(list(config)))
    for configfile in (TEST_CONFIG, str(reordered)):
        proc = snakemake("-n", "all", "--configfile", configfile, workdir=test_run)
        assert "Nothing to be done" in proc.stdout + proc.stderr, (configfile, jobs_of(proc.stdout + proc.stderr))


def test_a_change_to_hnsw_m_reruns_the_hnsw_searches_only(test_run, tmp_path):
    change = tmp_path / "hnsw.yaml"  # layered on the test config (--config would pass the list as strings)
    change.write_text("search:\n  hnsw_M: [16]\n")
    proc = snakemake("-n", "main", "--configfile", TEST_CONFIG, str(change), workdir=test_run)
    out = proc.stdout + proc.stderr
    searched = {line.split("runs/")[1].split(".parquet")[0] for line in out.splitlines()
                if "output:" in line and "/runs/" in line and "/runs/trec/" not in line}
    assert searched == {"de+faiss-hnsw"}, searched
    assert not jobs_of(out) & {"train_ehi", "train_de", "embed", "ehi_index"}


def test_a_change_to_the_tree_retrains_ehi_and_leaves_de_alone(test_run, tmp_path):
    """DE's training params carry only the keys DE reads (ehi.train.model_keys)."""
    change = tmp_path / "tree.yaml"
    change.write_text("train:\n  branching: 2\n  lambda_intra_leaf: 0.25\n  lambda_balance: 0.5\n")
    proc = snakemake("-n", "main", "--configfile", TEST_CONFIG, str(change), workdir=test_run)
    out = proc.stdout + proc.stderr
    assert "train_ehi" in jobs_of(out) and "train_de" not in jobs_of(out), jobs_of(out)
    searched = {line.split("runs/")[1].split(".parquet")[0] for line in out.splitlines()
                if "output:" in line and "/main/runs/" in line and "/runs/trec/" not in line}
    assert searched and all(s.startswith("ehi+") for s in searched), searched


# --- several datasets in one run (config/test/multi.yaml: two tiny synthetic sets, one with test-only
# qrels split by dataset.query_split), each its own module instance of the Snakefile (workflow/multi.smk)
MULTI_CONFIG = str(REPO / "config" / "test" / "multi.yaml")
MULTI = ("tiny", "tiny_testonly")


def test_lint_of_the_two_dataset_config(tmp_path):
    proc = snakemake("--lint", "--configfile", MULTI_CONFIG, workdir=tmp_path, check=False)
    assert "Congratulations" in proc.stdout + proc.stderr, proc.stdout + proc.stderr


def test_dry_run_of_a_two_dataset_config_schedules_both(tmp_path):
    proc = snakemake("-n", "all", "--configfile", MULTI_CONFIG, workdir=tmp_path)
    jobs = jobs_of(proc.stdout + proc.stderr)
    for name in MULTI:
        assert {f"{name}__prepare_data", f"{name}__train_ehi", f"{name}__train_de", f"{name}__tables"} <= jobs, jobs
    assert {"across_datasets", "all"} <= jobs


@pytest.fixture(scope="module")
def multi_run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("multi")
    # twice the test config's work: it took 29 min here with the 2 cores shared by five other helpers
    snakemake("all", "--cores", "2", "--configfile", MULTI_CONFIG, workdir=workdir, timeout=3600)
    return workdir


def test_two_datasets_run_end_to_end_each_under_its_own_results(multi_run):
    for name in MULTI:
        summary = pd.read_parquet(multi_run / "results" / name / "main" / "summary.parquet")
        assert set(summary.dataset) == {name} and {"ehi+tree", "de+exact"} <= set(summary.system)
        assert (multi_run / "results" / "tables" / f"{name}_kmr.md").stat().st_size > 0
    # each dataset trained its own tree shape: tiny 4^2 leaves, tiny_testonly 20^1
    leaves = {n: len(pd.read_parquet(multi_run / "results" / n / "main" / "leaves.parquet")) for n in MULTI}
    assert leaves == {"tiny": 16, "tiny_testonly": 20}


def test_the_test_only_dataset_is_split_as_its_manifest_says(multi_run):
    import json

    from ehi.data.query_split import ids_sha256

    data = multi_run / "resources" / "tiny_testonly" / "data"
    record = json.loads((data / "manifest.json").read_text())["query_split"]
    queries = pd.read_parquet(data / "queries.parquet")
    qrels = pd.read_parquet(data / "qrels.parquet")
    assert record["fractions"] == [0.5, 0.2, 0.3] and record["seed"] == 1
    for split in ("train", "dev", "test"):
        ids = queries.query_id[queries.split == split]
        assert record["counts"][split] == len(ids) > 0
        assert record["query_ids_sha256"][split] == ids_sha256(ids)
        assert set(qrels.query_id[qrels.split == split]) == set(ids)  # judgements moved with their queries
    assert sum(record["counts"].values()) == queries.query_id.nunique() == len(queries)  # disjoint, all judged


def test_the_cross_dataset_table_has_a_row_per_dataset(multi_run):
    across = multi_run / "results" / "tables" / "across_tiny+tiny_testonly"
    table = pd.read_csv(across.with_suffix(".csv"))
    assert list(table.dataset) == list(MULTI)
    assert table["ndcg@10 exact ehi+tree"].between(0, 1).all()
    assert table["recall@100 exact tree vs best peer"].str.contains(" vs ").all()
    assert across.with_suffix(".md").stat().st_size > 0 and across.with_suffix(".tex").stat().st_size > 0
    assert (multi_run / "results" / "figures" / "across_tiny+tiny_testonly.png").stat().st_size > 0


def test_two_dataset_tables_from_cached_results_schedule_no_training(multi_run, tmp_path):
    import shutil

    for name in MULTI:
        shutil.copytree(multi_run / "results" / name, tmp_path / "results" / name)
    proc = snakemake("-n", "tables", "--configfile", MULTI_CONFIG, workdir=tmp_path)
    jobs = jobs_of(proc.stdout + proc.stderr)
    assert {"across_datasets", "tiny__tables", "tiny_testonly__tables"} <= jobs
    assert not {j for j in jobs if j.split("__")[-1] in {"train_ehi", "train_de", "embed", "search", "evaluate"}}, jobs
