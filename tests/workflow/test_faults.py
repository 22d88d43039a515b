"""Faults a long research run meets, each tried for real: a SIGKILL mid-epoch, truncated and
corrupted checkpoints, weights of another shape, a tree too big for its corpus, a collapsed tree,
and unsafe-loading patterns in the source. Each test is named after the fault it tries."""

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from safetensors.torch import load_file

from ehi.model.tree_stats import leaf_health
from ehi.model.encoder import load_encoder
from ehi.search.tree_index import EHIIndex
from ehi.model.tree import TreeIndexer, load_indexer
from ehi.report.tables import leaf_balance, tree_warnings
from ehi.train.config import TrainConfig
from ehi.train.loop import train
from ehi.core.weights import WeightsError, load_weights

REPO = Path(__file__).resolve().parents[2]
TRAIN = dict(epochs=3, batch_size=16, height=2, branching=4, max_length=16, lr_encoder=1e-3,
             lr_indexer=1e-2, device="cpu", encode_batch_size=64, n_hard_negatives=1)

# Trains on the conftest's tiny synthetic set; with KILL_AT=n it SIGKILLs itself inside training
# step n (after the forward pass, before the optimizer step): no handler, no cleanup, like the OOM
# killer or a scheduler's pre-emption.
SCRIPT = textwrap.dedent("""
    import logging, os, signal, sys
    logging.basicConfig(level=logging.INFO)
    import ehi.train.loop as training
    from ehi.data.synthetic import SyntheticConfig, generate
    from ehi.model.encoder import load_encoder
    out, kill_at, cfg = sys.argv[1], int(sys.argv[2]), training.TrainConfig(**eval(sys.argv[3]))
    real_step, calls = training.train_step, [0]
    def step(*args, **kwargs):
        result = real_step(*args, **kwargs)
        calls[0] += 1
        if calls[0] == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        return result
    training.train_step = step
    data = generate(SyntheticConfig(n_docs=200, n_queries=60, n_topics=2, n_subtopics=4))
    encoder = load_encoder("tiny-random", max_length=16, device="cpu", seed=0)
    training.train(data, encoder, cfg, out, progress=False)
""")


def run_training(out: Path, kill_at: int = 0) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-c", SCRIPT, str(out), str(kill_at), repr(TRAIN)],
                          capture_output=True, text=True, env=env, timeout=300)


def weights(run_dir: Path) -> dict[str, torch.Tensor]:
    out = load_file(str(run_dir / "indexer.safetensors"))
    for f in sorted((run_dir / "encoder").glob("*.safetensors")):
        out.update({f"encoder.{k}": v for k, v in load_file(str(f)).items()})
    return out


@pytest.mark.slow  # three trainings in fresh interpreters, one killed
def test_resume_after_sigkill_mid_epoch_gives_the_same_weights(tmp_path, tiny_dataset):
    steps_per_epoch = -(-len(tiny_dataset.split("train")[1].query("relevance > 0")) // TRAIN["batch_size"])
    kill_at = steps_per_epoch + 2  # the second batch of epoch 2: epoch 1's checkpoint exists
    killed = run_training(tmp_path / "killed", kill_at)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    state = json.loads((tmp_path / "killed" / "checkpoint" / "state.json").read_text())
    assert state["epoch"] == 1  # the last complete epoch, nothing of the half-done one
    assert not (tmp_path / "killed" / "encoder").exists()  # no final model from a killed run
    assert len(pd.read_parquet(tmp_path / "killed" / "train_log.parquet")) == 1
    resumed = run_training(tmp_path / "killed")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "resumed from" in resumed.stderr
    straight = run_training(tmp_path / "straight")
    assert straight.returncode == 0, straight.stderr[-2000:]
    a, b = weights(tmp_path / "straight"), weights(tmp_path / "killed")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.fixture()
def one_epoch(tmp_path, tiny_dataset):
    """A run stopped after epoch 1 of 2: its checkpoint is what a resume reads."""
    cfg = TrainConfig(**{**TRAIN, "epochs": 2})
    train(tiny_dataset, load_encoder("tiny-random", max_length=16, device="cpu", seed=0), cfg, tmp_path,
          stop_after_epoch=1, progress=False)
    return cfg, tmp_path


def resume(cfg, out, dataset):
    return train(dataset, load_encoder("tiny-random", max_length=16, device="cpu", seed=0), cfg, out,
                 progress=False)


def test_truncated_checkpoint_file_is_named_and_nothing_is_overwritten(one_epoch, tiny_dataset):
    cfg, out = one_epoch
    target = out / "checkpoint" / "trainer_state.safetensors"
    target.write_bytes(target.read_bytes()[: target.stat().st_size // 2])  # a copy killed half-way
    before = (out / "checkpoint" / "state.json").read_text()
    with pytest.raises(WeightsError, match=re.escape(str(target)) + r".*truncated or corrupted"):
        resume(cfg, out, tiny_dataset)
    assert (out / "checkpoint" / "state.json").read_text() == before
    assert not (out / "encoder").exists()


def test_corrupted_checkpoint_weights_and_state_are_named(one_epoch, tiny_dataset):
    cfg, out = one_epoch
    target = out / "checkpoint" / "indexer.safetensors"
    target.write_bytes(b"\x00" * 8 + os.urandom(256))  # garbage header
    with pytest.raises(WeightsError, match=re.escape(str(target))):
        resume(cfg, out, tiny_dataset)
    (out / "checkpoint" / "state.json").write_text('{"epoch": 1, "step"')  # cut mid-write
    with pytest.raises(ValueError, match=r"state\.json: corrupted checkpoint state"):
        resume(cfg, out, tiny_dataset)


def test_weights_of_another_tree_shape_name_the_mismatched_tensor(tmp_path):
    TreeIndexer(dim=8, height=2, branching=4).save(tmp_path)
    spec = json.loads((tmp_path / "indexer.json").read_text())
    (tmp_path / "indexer.json").write_text(json.dumps({**spec, "branching": 3}))  # config of another run
    with pytest.raises(WeightsError, match=r"another model configuration: .*saved \(\d+, \d+\), model expects"):
        load_indexer(tmp_path)
    other = TreeIndexer(dim=16, height=2, branching=4)
    with pytest.raises(WeightsError, match=r"saved .*8.*model expects .*16"):
        load_weights(other, tmp_path / "indexer.safetensors")
    assert not (tmp_path / "missing.safetensors").exists()
    with pytest.raises(WeightsError, match="missing.safetensors: weights file missing"):
        load_weights(other, tmp_path / "missing.safetensors")


def test_more_leaves_than_documents_is_refused_before_training(tmp_path, tiny_dataset):
    cfg = TrainConfig(**{**TRAIN, "height": 3, "branching": 8})  # 512 leaves, 200 documents
    with pytest.raises(ValueError, match=r"height=3, branching=8 has 512 leaves .* only 200 documents"):
        resume(cfg, tmp_path, tiny_dataset)
    assert not any(tmp_path.iterdir())  # refused before anything was written
    with pytest.raises(ValueError, match="512 leaves"):
        docs = np.random.default_rng(0).standard_normal((200, 8)).astype(np.float32)  # zero rows are refused first
        EHIIndex.build(docs, TreeIndexer(dim=8, height=3, branching=8))


def test_leaf_collapse_and_empty_leaves_are_flagged_in_tables_and_figures(tmp_path):
    healthy = np.full(16, 10)
    collapsed = np.array([150] + [1] * 10 + [0] * 5)
    skewed = np.array([40] + [4] * 15)  # 40% of the documents, 6.4x the mean
    gappy = np.array([12] * 14 + [0, 0])
    assert leaf_health(healthy)[0] == "ok"
    status, why = leaf_health(collapsed)
    assert status == "collapsed" and "one leaf holds 94%" in why and "5 of 16 leaves empty" in why
    assert leaf_health(skewed)[0] == "unbalanced"
    assert leaf_health(gappy) == ("empty leaves", "2 of 16 leaves are empty")
    leaves = {v: pd.DataFrame({"leaf": range(len(s)), "size": s})
              for v, s in {"main": healthy, "height~1": collapsed}.items()}
    table = leaf_balance(leaves)
    assert table.set_index("variant").status.to_dict() == {"main": "ok", "height~1": "collapsed"}
    warnings = tree_warnings(leaves)
    assert list(warnings) == ["height~1"] and "(height~1) has collapsed" in warnings["height~1"]
    from ehi.report.figures import plot_leaf_sizes

    assert plot_leaf_sizes({k: v["size"].to_numpy() for k, v in leaves.items()}, tmp_path / "l.png").stat().st_size


def test_collapsed_tree_is_said_in_words_under_the_report_table(tmp_path, caplog):
    from ehi.report.tables import ReportInputs, ReportSettings, build_report

    results = tmp_path / "results"
    (results / "main").mkdir(parents=True)
    rows = [("d", s, "main", "beam", float(b), f, "ndcg@10", v, 10.0)
            for s, b, f, v in [("ehi+tree", 1, 0.9, 0.5), ("ehi+exact", 0, 1.0, 0.5)]]
    from ehi.core.io import write_table

    cols = ["dataset", "system", "variant", "budget_param", "budget_value", "frac_visited", "metric", "value", "qps"]
    write_table(pd.DataFrame(rows, columns=cols), "summary", results / "main" / "summary.parquet")
    write_table(pd.DataFrame({"dataset": "d", "variant": "main", "leaf": range(4), "size": [97, 1, 1, 1]}),
                "leaves", results / "main" / "leaves.parquet")
    sig_cols = ["dataset", "metric", "budget", "system_a", "system_b", "mean_a", "mean_b", "delta", "test",
                "p_value", "p_adjusted", "significant"]
    write_table(pd.DataFrame(columns=sig_cols), "significance", results / "significance.parquet")
    with caplog.at_level("WARNING"):
        settings = ReportSettings("d", ("main",), {}, ("ndcg@10",), (0.1, 1.0), ("ehi+tree", "ehi+exact"))
        build_report(ReportInputs.of_results(results, ["main"]), settings,
                     tmp_path / "tables", tmp_path / "figs")
    caption, *_, note = (tmp_path / "tables" / "d_kmr.md").read_text().strip().split("\n\n")
    assert "collapse" not in caption and note.startswith("EHI's tree (main setting) has collapsed: leaf collapse")
    tex = (tmp_path / "tables" / "d_kmr.tex").read_text()
    assert "WARNING" not in tex and "collapse" not in tex.split(r"\caption{")[1].split("}")[0]
    assert "collapsed" in (tmp_path / "tables" / "d_leaf_balance.md").read_text().split("\n\n")[-1]
    assert any("collapsed" in r.message for r in caplog.records)


UNSAFE = {
    r"torch\.load\((?![^)]*weights_only=True)": "torch.load without weights_only=True",
    r"\bpickle\.loads?\(": "pickle",
    r"allow_pickle=True": "numpy unpickling",
    r"shell=True": "a shell built from strings",
}


def test_source_has_no_unsafe_loading_or_shell_patterns():
    offenders = []
    for root in ("ehi", "workflow", "benchmarks"):
        for path in sorted((REPO / root).rglob("*")):
            if path.suffix not in {".py", ".smk"} and path.name != "Snakefile":
                continue
            text = path.read_text()
            offenders += [f"{path.relative_to(REPO)}: {why}" for pattern, why in UNSAFE.items()
                          if re.search(pattern, text)]
    assert not offenders, offenders


def test_determinism_scann_builds_twice_into_the_same_partitions_and_results():
    """ScaNN's k-means runs single-threaded with a fixed seed (ehi.search.scann_ann._seeded), so two
    builds partition alike. Partition numbering may differ between builds, so partitions are
    compared as sets of documents, and searches by their results."""
    from ehi.search.registry import build_searcher

    def canonical(doc_leaf):  # number partitions in order of first appearance
        first: dict[int, int] = {}
        return np.array([first.setdefault(int(leaf), len(first)) for leaf in doc_leaf])

    emb = np.random.default_rng(0).standard_normal((1500, 32)).astype(np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    a, b = (build_searcher("scann", emb, num_leaves=40) for _ in range(2))
    assert np.array_equal(canonical(a.doc_leaf), canonical(b.doc_leaf))
    queries = emb[:100]
    for leaves in (1, 4):
        (rows_a, scores_a, n_a), (rows_b, scores_b, n_b) = (s.search(queries, 10, leaves) for s in (a, b))
        assert np.array_equal(rows_a, rows_b) and np.array_equal(scores_a, scores_b) and np.array_equal(n_a, n_b)
