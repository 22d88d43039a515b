"""The path of a user with a network, through Snakemake, without one: every config/paper/*.yaml
passes a dry run; systems that can never run and a BEIR source without its copy are refused by it;
a downloadable source's published files, served from 127.0.0.1, are fetched, verified, prepared
and logged by `snakemake data`, and a second preparation fetches nothing; and the MS MARCO paper
config's code path runs end to end at toy scale (served fixture, tiny encoder, the same rules)."""

import json
import os
import subprocess

import pytest
import yaml

from tests.data import source_fixtures as fx
from tests.data.served import serve, write_overrides
from tests.workflow.test_bad_input import refused_dry_run
from tests.workflow.test_workflow import REPO, SNAKEMAKE, TEST_CONFIG, jobs_of, snakemake

PAPER = sorted((REPO / "config" / "paper").glob("*.yaml"))
NEVER_RUN = [
    ("pre+tree", {"search": {"systems": ["pre+exact", "pre+tree"]}}, "config search.systems: ['pre+tree'] search a tree"),
    ("de+tree-pq", {"search": {"systems": ["de+tree-pq", "ehi+tree"]}}, "config search.systems: ['de+tree-pq'] search a tree"),
    ("beir without path", {"dataset": {"name": "mine", "source": "beir"}}, "config dataset.path: source 'beir' reads a local"),
]


@pytest.mark.parametrize("config", PAPER, ids=[p.stem for p in PAPER])
def test_each_paper_config_passes_a_dry_run(tmp_path, config):
    # as a user with a network (the hub encoders the jobs would fetch are not in this cache; a dry
    # run reads the cache only); offline, such an encoder is refused at -n (tests/core/test_config_values.py)
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")}
    proc = subprocess.run([*SNAKEMAKE, "--directory", str(tmp_path), "-n", "all", "--configfile", str(config)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    jobs = jobs_of(proc.stdout)
    assert {"prepare_data", "train_ehi", "train_de", "ehi_index", "tables"} <= jobs, sorted(jobs)
    total = next(line.split()[1] for line in proc.stdout.splitlines() if line.startswith("total"))
    print(f"{config.name}: {total} jobs")


@pytest.mark.parametrize("case, override, names", NEVER_RUN, ids=[c[0] for c in NEVER_RUN])
def test_a_dry_run_refuses_what_can_never_run(tmp_path, case, override, names):
    assert names in refused_dry_run(tmp_path, override)


def served_config(tmp_path, name: str, source: str, over: dict | None = None) -> str:
    case = tmp_path / f"{name}.yaml"
    dataset = {"name": name, "source": source, "cache_dir": str(tmp_path / "cache")}
    case.write_text(yaml.safe_dump({**(over or {}), "dataset": {**(over or {}).get("dataset", {}), **dataset}}))
    return str(case)


def test_snakemake_data_downloads_verifies_prepares_logs_and_then_fetches_nothing(tmp_path, monkeypatch):
    files = fx.beir_zip("scifact", n_docs=60, splits=(("train", 20), ("dev", 6), ("test", 8)))
    work, case = tmp_path / "work", served_config(tmp_path, "served", "scifact")
    with serve(files) as served:
        monkeypatch.setenv("EHI_SOURCE_OVERRIDES", str(write_overrides(tmp_path / "o.json", served.overrides("scifact"))))
        snakemake("data", "--cores", "1", "--configfile", TEST_CONFIG, case, workdir=work)
        assert served.requests == ["scifact.zip"]
        log = (work / "logs" / "served" / "prepare_data.log").read_text()
        assert f"scifact: downloading {served.url}scifact.zip" in log and "dataset served: 60 documents" in log
        manifest = json.loads((work / "resources" / "served" / "data" / "manifest.json").read_text())
        assert manifest["queries_per_split"] == {"train": 20, "dev": 6, "test": 8}
        recorded = json.loads((tmp_path / "cache" / "scifact" / "checksums.json").read_text())
        assert list(recorded) == ["scifact.zip"]
        snakemake("data", "--cores", "1", "--forcerun", "prepare_data", "--configfile", TEST_CONFIG, case, workdir=work)
        assert served.requests == ["scifact.zip"]  # prepared again from the cache


# The MS MARCO paper config, shrunk only where scale forces it: the same source, rules and splits
# (train, dev.small as dev, TREC DL 2019 as test; baselines tuned on train, evaluated on dev).
TOY_MSMARCO = {
    "encoder": {"name": "tiny-random", "max_length": 32, "batch_size": 64},
    "train": {"epochs": 1, "batch_size": 8, "height": 1, "branching": 4, "n_hard_negatives": 1},
    "search": {"systems": ["pre+exact", "de+exact", "de+faiss-ivf", "ehi+tree", "ehi+exact"], "k": 20,
               "batch_size": 64, "threads": 1, "ivf_nlist": [4]},
    "evaluation": {"metrics": ["ndcg@10", "mrr@10", "recall@10"], "n_permutations": 100},
}


def test_the_msmarco_paper_config_runs_end_to_end_at_toy_scale(tmp_path, monkeypatch):
    files, work = fx.msmarco(), tmp_path / "work"
    case = served_config(tmp_path, "msmarco-toy", "msmarco", TOY_MSMARCO)
    paper = str(REPO / "config" / "paper" / "msmarco.yaml")
    with serve(files) as served:
        monkeypatch.setenv("EHI_SOURCE_OVERRIDES", str(write_overrides(tmp_path / "o.json", served.overrides("msmarco"))))
        proc = snakemake("main", "--cores", "2", "--configfile", paper, case, workdir=work, timeout=1200)
    said = proc.stdout + proc.stderr
    assert "train ehi: epoch 1/1 loss=" in said and "train de: done after 1 epochs" in said  # on the console
    results = work / "results" / "msmarco-toy"
    assert (results / "main" / "summary.parquet").is_file() and (results / "significance.parquet").is_file()
    import pandas as pd

    summary = pd.read_parquet(results / "main" / "summary.parquet")
    assert set(summary.system) >= set(TOY_MSMARCO["search"]["systems"])
    manifest = json.loads((work / "resources" / "msmarco-toy" / "data" / "manifest.json").read_text())
    assert manifest["queries_per_split"] == {"train": 30, "dev": 10, "test": 5}
    assert os.environ.get("HF_HUB_OFFLINE") == "1"  # the tests' own setting, never the project's
