"""``ehi compare DIR``: the folder's own config, its dry run through the pipeline, and what it
refuses before running anything (the full run is docs/embeddings.md's example, tests/test_docs_examples.py;
the config of each kind of run is tests/serve/test_compare_config.py's)."""

import re

import pandas as pd
import pytest
import yaml

from ehi.core.errors import ConfigError
from ehi.data.vector_world import WorldConfig, generate_world
from ehi.serve.cli import main
from ehi.serve.compare import (REPO, check_results_are_ours, compare, dataset_name, default_out,
                               snakemake_command)
from ehi.serve.compare_config import FROZEN, variant_systems


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    out = tmp_path_factory.mktemp("vectors") / "my vectors"
    generate_world(out, WorldConfig(n_docs=300, dim=16, n_train=60, n_dev=30, n_test=30))
    return out


def test_the_dataset_is_named_after_the_folder_and_its_config_names_nothing_else(world, tmp_path):
    assert dataset_name(world, None) == "my_vectors" and dataset_name(world, "mine") == "mine"
    with pytest.raises(ConfigError, match="pass --name"):
        dataset_name(world, "../x")
    command = snakemake_command(world, "my_vectors", 2, [0], [], tmp_path, quick=True)
    own = tmp_path / "resources" / "my_vectors" / "compare.yaml"
    assert command[-2:] == [str(FROZEN), str(own)]
    assert yaml.safe_load(own.read_text()) == {
        "dataset": {"name": "my_vectors", "source": "embeddings", "path": str(world)},
        "encoder": {"name": str(world)}, "train": {"seeds": [0]}}


def test_results_another_dataset_made_are_refused(world, tmp_path):
    (tmp_path / "results" / "my_vectors").mkdir(parents=True)
    with pytest.raises(ConfigError, match="holds results of another dataset"):
        check_results_are_ours("my_vectors", world, tmp_path)
    check_results_are_ours("fresh", world, tmp_path)


def test_a_folder_that_is_not_vectors_is_one_line(tmp_path):
    with pytest.raises(SystemExit) as exc:
        main(["compare", str(tmp_path)])
    assert str(exc.value.code).startswith(f"ehi compare: error: {tmp_path} is not a vectors folder")


def planned(console: str, rule: str) -> list[str]:
    """The wildcards line (or the output line, for a rule without wildcards) of each job of ``rule``
    a dry run's console lists."""
    jobs = console.split(f"\nrule {rule}:\n")[1:]
    return [next((line.strip() for line in job.split("\n[")[0].splitlines() if line.strip().startswith(key)), "")
            for job in jobs for key in (("wildcards:",) if "wildcards:" in job.split("\n[")[0] else ("output:",))]


@pytest.mark.integration  # ehi compare starts Snakemake
def test_the_dry_run_plans_the_decisive_comparison_and_with_time_the_benchmark(world, tmp_path, monkeypatch, capfd):
    """DE at each rate of the grid, then at the dev choice for the other seeds; the trees alone on
    DE's frozen vectors and on the vectors as given; every peer on both; no tree trained jointly
    with the encoder; under --time the benchmark of a two-stage tree."""
    monkeypatch.chdir(tmp_path)
    assert main(["compare", str(world), "--time", "-n"]) == 0
    out = capfd.readouterr().out
    de = planned(out, "train_de")
    assert sorted(de) == ["wildcards: variant=lr_encoder~0.0001", "wildcards: variant=lr_encoder~0.001",
                          "wildcards: variant=seed~1", "wildcards: variant=seed~2"]
    assert planned(out, "dev_grid") == ["wildcards: variant=main, model=de"]
    trees = [line.removeprefix("wildcards: variant=") for line in planned(out, "train_ehi")]
    rows = {tree: variant for tree, (_, variant) in variant_systems().items()}
    for tree, variant in rows.items():  # each reported tree over three seeds
        assert sorted(t for t in trees if t.startswith(variant)) == [variant, f"{variant}/seed~1", f"{variant}/seed~2"]
    assert len(trees) == 12 and all("freeze_layers~1" in t for t in trees), trees
    assert sum("encoder_init~de" in t for t in trees) == 6
    searched = {line.split("system=")[1] for line in planned(out, "search") if "variant=main," in line}
    assert {f"{encoder}+{method}" for encoder in ("pre", "de")
            for method in ("exact", "ivf-lists", "faiss-ivf", "scann", "faiss-hnsw")} == searched
    assert planned(out, "trained_benchmark") == [
        "output: results/benchmarks/trained_my_vectors/trained.md (update), "
        "results/benchmarks/trained_my_vectors/trained_curves.parquet (update), "
        "results/benchmarks/trained_my_vectors/trained_matched.parquet (update), "
        "results/benchmarks/trained_my_vectors/trained_pareto.png (update)"]
    assert f"resources/my_vectors/{rows['ehi-2stage+tree']}/ehi/index" in out.split("\nrule trained_benchmark:\n")[1]


@pytest.mark.integration  # ehi compare starts Snakemake
def test_the_quick_dry_run_plans_the_frozen_study(world, tmp_path, monkeypatch, capfd):
    monkeypatch.chdir(tmp_path)
    assert main(["compare", str(world), "--quick", "-n"]) == 0
    out = capfd.readouterr().out
    for job in ("train_ehi", "dev_leaf_count", "search_index", "claims", "tables"):
        assert f"\n{job} " in out, out[-3000:]
    assert "de+" not in out and "train_de" not in out and "resources/my_vectors/main/ehi/search_index" in out
    assert sorted(planned(out, "train_ehi")) == ["wildcards: variant=indexer_init~ivf/lambda_balance~10.0/floor~kmeans",
                                                 "wildcards: variant=main"]  # one seed: the tree and the floor's


@pytest.mark.parametrize("cores", ["0", "-2"])
def test_cores_below_one_are_refused_in_one_line(world, tmp_path, monkeypatch, cores):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        main(["compare", str(world), "--cores", cores])
    assert str(exc.value.code) == f"ehi compare: error: --cores must be a whole number of at least 1, got {cores}"
    assert not (tmp_path / "resources").exists()


def test_a_run_that_does_not_finish_leaves_the_record_of_the_last_finished_one(world, tmp_path, monkeypatch):
    from ehi.serve import compare as compare_module

    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"  # its own folder: the world's default one holds other tests' runs
    record = out / "resources" / "my_vectors" / "compare.yaml"
    record.parent.mkdir(parents=True)
    record.write_text("the last finished run\n")
    for status, extra in ((1, []), (0, ["-n"]), (0, ["--unlock"])):  # failed, planned, unlocked: none finished
        monkeypatch.setattr(compare_module, "run_owned", lambda command, *_, status=status: status)
        assert compare_module.compare(world, seeds=[3], extra=extra, out=out) == status
        assert record.read_text() == "the last finished run\n"
        assert sorted(p.name for p in record.parent.iterdir()) == ["compare.yaml"]
    monkeypatch.setattr(compare_module, "run_owned", lambda command, *_: 0)
    assert compare_module.compare(world, seeds=[3], out=out) == 0
    assert yaml.safe_load(record.read_text())["train"] == {"seeds": [3]}


def test_a_signal_to_the_wrapper_reaches_the_pipeline_it_runs(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    child = ("import signal, sys, time\n"
             f"signal.signal(signal.SIGTERM, lambda *a: (open({str(tmp_path / 'got')!r}, 'w').write('TERM'), sys.exit(7)))\n"
             f"open({str(tmp_path / 'ready')!r}, 'w').close(); time.sleep(60)")
    wrapper = subprocess.Popen([sys.executable, "-c", "import sys; from ehi.serve.compare_run import run_owned; "
                                f"sys.exit(run_owned([sys.executable, '-c', {child!r}]))"])
    for _ in range(200):
        if (tmp_path / "ready").exists():
            break
        time.sleep(0.1)
    wrapper.send_signal(signal.SIGTERM)
    assert wrapper.wait(timeout=30) == 7
    assert (tmp_path / "got").read_text() == "TERM"


def test_a_lock_left_by_a_killed_run_gets_advice_the_command_accepts(world, tmp_path, monkeypatch, capsys):
    from ehi.serve import compare as compare_module

    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"  # its own folder: a lock left in the world's default one would stop other tests' runs
    (out / ".snakemake" / "locks").mkdir(parents=True)
    (out / ".snakemake" / "locks" / "0.input.lock").write_text("x")
    seen = []
    monkeypatch.setattr(compare_module, "run_owned", lambda command, *_: seen.append(command) or 1)
    assert compare_module.compare(world, out=out) == 1
    assert f"`ehi compare {world} --out {out} --unlock`" in capsys.readouterr().err
    assert main(["compare", str(world), "--out", str(out), "--unlock"]) == 1 and seen[-1][-1] == "--unlock"


def test_the_default_out_is_beside_the_folder_and_the_checkouts_results_are_refused(world, tmp_path):
    assert default_out(world, "my_vectors") == world.parent / "my_vectors_compare"
    for inside in (REPO / "results", REPO):
        with pytest.raises(ConfigError, match="the checkout's own results would be written over"):
            compare(world, out=inside)


def checkout_files() -> dict[str, tuple[int, int]]:
    """Every file of the checkout but git's and caches', with its size and time."""
    skip = {".git", "__pycache__", ".pytest_cache", ".ruff_cache"}
    return {str(p.relative_to(REPO)): (p.stat().st_size, p.stat().st_mtime_ns) for p in REPO.rglob("*")
            if p.is_file() and not skip & set(p.relative_to(REPO).parts)}


def kmr_cell(per_query_file, target: float, axis: str, metric: str = "ndcg@10") -> float:
    """The KMR cell of a system run once, read from its per-query rows by ``axis`` (frac_work or
    frac_visited): the mean value at its largest point whose mean fraction is at most ``target``."""
    rows = pd.read_parquet(per_query_file)
    points = rows[rows.metric == metric].groupby("budget_value").agg(fraction=(axis, "mean"), value=("value", "mean"))
    return float(points[points.fraction <= target + 1e-12].sort_values("fraction").value.iloc[-1])


@pytest.mark.integration  # ehi compare starts Snakemake
def test_a_comparison_run_from_the_project_root(world, capfd, monkeypatch):
    """Run from the project root (the frozen study, --quick): the checkout is left as it was (everything goes to the folder
    beside DIR), the console is a line a job plus the summary, the systems over the given vectors
    are pre+, deterministic ones show no seed spread, and the KMR table's cells read the fraction
    of work (routing counted), as the docs and --help say."""
    monkeypatch.chdir(REPO)
    before = checkout_files()
    assert main(["compare", str(world), "--quick", "--seeds", "0", "1"]) == 0
    assert checkout_files() == before
    out = world.parent / "my_vectors_compare"
    console = [line for line in "".join(capfd.readouterr()).splitlines() if line.strip()]
    total = int(next(re.search(r" of (\d+) steps", line) for line in console if " steps (" in line).group(1))
    steps = [line for line in console if re.match(rf"^\d+ of {total} steps \(\d+%\) done: \w+", line)]
    assert len(steps) == total and len(console) <= total + 12, "\n".join(console)
    # the pointers, then the line saying every claim is n/a (on 300 documents routing alone costs more
    # than 10% of work: no tree point to test), where the report is and the answer, the report's first
    log = console.index(f"log:         {out / 'compare.log'}")
    answer = (out / "report.md").read_text().splitlines()[2]
    assert console[log + 1].startswith("Warning: every claim is n/a") and answer.endswith("gives no answer.")
    assert console[log + 2:] == [f"report:      {out / 'report.md'}", answer]
    assert max(map(len, console[:log + 2])) < 300
    table = (out / "results" / "tables" / "my_vectors_kmr.md").read_text()
    assert "fraction of work (documents scored plus routing)" in table
    rows = {line.split("|")[2].strip(): [c.strip() for c in line.split("|")[1:-1]] for line in table.splitlines()
            if line.startswith("| ndcg@10")}  # every cell, as the header's columns
    assert {"pre+exact", "pre+faiss-ivf", "pre+faiss-hnsw", "pre+ivf-lists", "ehi+tree"} <= set(rows)
    assert not any(s.startswith("ehi+faiss") or s.startswith("ehi+scann") for s in rows), rows
    assert "±" not in rows["pre+exact"][-1] and "±" in rows["ehi+tree"][-1]
    header = [c.strip() for c in next(line for line in table.splitlines() if line.startswith("| metric")).split("|")[1:-1]]
    cell = float(rows["pre+faiss-ivf"][header.index("20%")])
    ivf = out / "results" / "my_vectors" / "main" / "per_query" / "pre+faiss-ivf.parquet"
    # on this folder the two axes pick different points at 20% (0.806 by work, 0.860 by documents)
    assert cell == pytest.approx(kmr_cell(ivf, 0.2, "frac_work"), abs=6e-4)
    assert cell != pytest.approx(kmr_cell(ivf, 0.2, "frac_visited"), abs=6e-4)


# Worlds of 3,000 x 32 vectors, 200 dev and 300 test queries, where the learned partition is known
# to win (queries shifted off their documents per topic, 1,000 training queries) and to lose
# (queries as documents, 50 training queries). Measured with one seed, one core: about 2 minutes of
# CPU each; the floor tree's worst difference to a peer was +0.078 (all 12 comparisons significant)
# and -0.019 (none significant), the paper's tree -0.34 to k-means IVF with as many lists.
WIN = {"asymmetry": 1.0, "n_train": 1000}
LOSE = {"asymmetry": 0.0, "n_train": 50}


def compared(tmp_path_factory, knobs: dict) -> tuple[pd.DataFrame, list[str], str]:
    """The claims table, the console's lines and the report of ``ehi compare --quick`` (the frozen
    study, one seed: no encoder trains, so the searches of the vectors as given are the baselines)."""
    import contextlib
    import io

    folder = tmp_path_factory.mktemp("world") / "mine"
    generate_world(folder, WorldConfig(n_docs=3000, dim=32, query_noise=1.0, n_dev=200, n_test=300, **knobs))
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["compare", str(folder), "--quick", "--cores", "1", "--out", str(folder.parent / "out")]) == 0
    claims = pd.read_csv(folder.parent / "out" / "results" / "tables" / "mine_claims.csv", keep_default_na=False)
    return claims.set_index("claim"), printed.getvalue().splitlines(), (folder.parent / "out" / "report.md").read_text()


@pytest.mark.integration
def test_where_the_learned_partition_wins_claim_g_is_ok_against_the_searches_of_the_vectors(tmp_path_factory):
    claims, console, report = compared(tmp_path_factory, WIN)
    assert claims.loc["g", "verdict"] == "OK" and claims.loc["g: significance", "verdict"] == "OK"
    assert float(claims.loc["g", "significant_for"]) > 0 and "pre+" in claims.loc["g", "worst_at"]
    assert claims.loc["c", "verdict"] != "n/a" and claims.loc["a", "verdict"] == "n/a"  # a needs a dual encoder
    assert console[-1] == report.splitlines()[2] and "the better learned partition is ehi" in console[-1]
    assert "every claim is n/a" not in "\n".join(console)


@pytest.mark.integration
def test_where_the_learned_partition_loses_claim_g_fails_and_the_answer_says_so(tmp_path_factory):
    claims, console, report = compared(tmp_path_factory, LOSE)
    assert claims.loc["g", "verdict"] == "FAIL"
    # the paper's tree, significantly below k-means IVF with as many lists and HNSW
    assert claims.loc["c: significance", "verdict"] == "FAIL" and claims.loc["e: significance", "verdict"] == "FAIL"
    assert "loses here: use pre+" in console[-1] and console[-1] == report.splitlines()[2]
