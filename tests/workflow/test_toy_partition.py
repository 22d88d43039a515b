"""A new partitioner is its own file and one registration: the toy random balanced partition
(tests/plugins/ehi_toy_partition.py, named in EHI_PLUGINS) is tuned, searched and scored by the
pipeline's own code, styled from its registry entry, and scheduled through search, evaluation,
tables and claims by the test config's dry run, with no edit anywhere else."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.plugins.loading import PLUGIN_DIR, loaded_plugin

REPO = Path(__file__).resolve().parents[2]
TEST_CONFIG = REPO / "config" / "test" / "test.yaml"
SYSTEM = "de+toy-partition"


@pytest.fixture
def toy_partition(monkeypatch):
    """The plugin loaded into this process; its registration removed afterwards."""
    from ehi.search import registry

    with loaded_plugin(monkeypatch, "ehi_toy_partition", [(registry._REGISTRY, "toy-partition")]):
        yield


def test_toy_partition_is_tuned_searched_scored_and_styled(toy_partition, tiny_dataset):
    from ehi.evaluate.metrics import per_query_metrics
    from ehi.evaluate.sweep import search_system
    from ehi.report.styles import beyond_paper, marker
    from ehi.search.config import SearchConfig
    from ehi.search.registry import check_systems, rule_settings

    check_systems([SYSTEM, "ehi+toy-partition"])
    assert set(rule_settings({**vars(SearchConfig())}, SYSTEM)) == {"k", "batch_size", "threads", "tune_split", "ivf_nlist"}
    rng = np.random.default_rng(0)
    docs = rng.standard_normal((len(tiny_dataset.corpus), 8)).astype(np.float32)
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    queries = rng.standard_normal((len(tiny_dataset.queries), 8)).astype(np.float32)
    settings = SearchConfig(k=10, ivf_nlist=[4, 8], budget_cost="work")
    run, qps = search_system(SYSTEM, "main", tiny_dataset, docs, queries, "test", settings)
    assert set(run.budget_param) == {"nprobe"} and len(qps) == run.budget_value.nunique() >= 2
    nlist = int(run.budget_value.max())
    assert nlist in (4, 8) and (run.n_routed == nlist).all()  # tuned on dev among the configured lists
    # balanced lists: one probe scores N / nlist documents; every probe is exact search
    assert (run[run.budget_value == 1].n_scored == len(docs) // nlist).all()
    exact, _ = search_system("de+exact", "main", tiny_dataset, docs, queries, "test", settings)
    assert run[run.budget_value == nlist].doc_id.tolist() == exact.doc_id.tolist()
    _, qrels = tiny_dataset.split("test")
    scores = per_query_metrics(run, qrels, "tiny", len(docs), ["ndcg@10", "recall@10"])
    assert set(scores.metric) == {"ndcg@10", "recall@10"} and scores.value.between(0, 1).all()
    assert marker("toy-partition") == "v" and beyond_paper(SYSTEM)


def test_dry_run_schedules_the_toy_partition_through_tables_and_claims(tmp_path):
    config = tmp_path / "toy.yaml"
    config.write_text(f"search:\n  systems: [de+exact, ehi+tree, {SYSTEM}]\n")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "EHI_PLUGINS": "ehi_toy_partition",
           "PYTHONPATH": os.pathsep.join([str(PLUGIN_DIR), str(REPO), os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(tmp_path),
           "-n", "tables", "claims", "--configfile", str(TEST_CONFIG), str(config)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert f"runs/{SYSTEM}.parquet" in out and f"per_query/{SYSTEM}.parquet" in out
    assert "rule tables:" in out and "rule claims:" in out
