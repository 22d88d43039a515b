"""A toy ANNS baseline and a toy metric, added through their registries alone (a plugin module,
tests/plugins/ehi_toy_plugin.py, named in EHI_PLUGINS), searched and scored by the pipeline's
own code and scheduled by the test config's dry run."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.plugins.loading import PLUGIN_DIR, loaded_plugin

REPO = Path(__file__).resolve().parents[2]
TEST_CONFIG = REPO / "config" / "test" / "test.yaml"


@pytest.fixture
def toy_plugin(monkeypatch):
    """The plugin loaded into this process; its registrations removed afterwards."""
    from ehi.evaluate import metric_registry
    from ehi.search import registry

    with loaded_plugin(monkeypatch, "ehi_toy_plugin", [(registry._REGISTRY, "toy-prefix"),
                                                       (metric_registry._REGISTRY, "hit")]):
        yield


def test_toy_kind_and_metric_run_through_the_sweep_and_the_metrics(toy_plugin, tiny_dataset):
    from ehi.evaluate.metrics import per_query_metrics
    from ehi.evaluate.sweep import search_system
    from ehi.search.config import SearchConfig
    from ehi.search.registry import build_searcher, kinds, searches

    assert "toy-prefix" in kinds() and "toy-prefix" in searches()
    rng = np.random.default_rng(0)
    docs = rng.standard_normal((len(tiny_dataset.corpus), 8)).astype(np.float32)
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    queries = rng.standard_normal((len(tiny_dataset.queries), 8)).astype(np.float32)
    run, qps = search_system("de+toy-prefix", "main", tiny_dataset, docs, queries, "test", SearchConfig(k=10))
    assert set(run.budget_param) == {"prefix"} and len(qps) == run.budget_value.nunique() >= 2
    # at its full budget the toy kind is exact search
    full = run[run.budget_value == run.budget_value.max()]
    exact, _ = search_system("de+exact", "main", tiny_dataset, docs, queries, "test", SearchConfig(k=10))
    assert full.n_scored.eq(len(docs)).all()
    assert full.doc_id.tolist() == exact.doc_id.tolist()
    _, qrels = tiny_dataset.split("test")
    scores = per_query_metrics(run, qrels, "tiny", len(docs), ["recall@10", "hit@10"])
    hit = scores[scores.metric == "hit@10"].value.to_numpy()
    recall = scores[scores.metric == "recall@10"].value.to_numpy()
    assert set(np.unique(hit)) <= {0.0, 1.0}
    np.testing.assert_array_equal(hit, (recall > 0).astype(float))  # a hit is a non-zero recall
    assert build_searcher("toy-prefix", docs).search(queries[:3], 5, 10)[2].tolist() == [10, 10, 10]


def _dry_run(tmp_path, env_plugins: bool):
    config = tmp_path / "toy.yaml"
    config.write_text("search:\n  systems: [de+exact, de+toy-prefix, ehi+toy-prefix]\n"
                      "evaluation:\n  metrics: [ndcg@10, hit@10]\n")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "PYTHONPATH": os.pathsep.join([str(PLUGIN_DIR), str(REPO), os.environ.get("PYTHONPATH", "")])}
    env.pop("EHI_PLUGINS", None)
    if env_plugins:
        env["EHI_PLUGINS"] = "ehi_toy_plugin"
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(tmp_path),
           "-n", "main", "--configfile", str(TEST_CONFIG), str(config)]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)


def test_dry_run_schedules_the_toy_kind_only_with_the_plugin(tmp_path):
    proc = _dry_run(tmp_path, env_plugins=True)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    for system in ("de+toy-prefix", "ehi+toy-prefix"):
        assert f"runs/{system}.parquet" in out and f"per_query/{system}.parquet" in out
    # (a dry run prints no params: the toy metric is computed for real in the test above)
    proc = _dry_run(tmp_path, env_plugins=False)
    assert proc.returncode != 0
    assert "unknown system(s) ['de+toy-prefix', 'ehi+toy-prefix']" in proc.stdout + proc.stderr
