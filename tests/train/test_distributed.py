"""Multi-process training (torchrun, gloo, CPU) against the single-process loop.

The test launches this very file under ``torch.distributed.run`` with two processes (the
``__main__`` block below is the worker), then trains the same configurations in the test process
and compares. The tiny random encoder's dropout is switched off in both (each rank draws its own
dropout masks, so with dropout on the runs would differ by design); everything else is the real
code path: sharded batches and re-embeddings, gathered in-batch negatives, DDP's averaged gradients.
The batch size (5) does not divide by the world size, and the last batch of 17 pairs holds 2, so
uneven shares are covered.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_loop import config, encoder, tiny_dataset

from ehi.train.distributed import Context, shard_bounds, shard_sizes
from ehi.train.loop import train

pytestmark = pytest.mark.slow  # two-process torchrun trainings
CONFIGS = {
    # EHI with every term on, L_neighbour included (a term each rank computes in full) and a
    # lazily updated cache carried across epochs (reindex_every=2)
    "ehi": dict(epochs=2, batch_size=5, lambda_neighbour=0.5, neighbour_k=3, neighbour_anchors=8, reindex_every=2),
    # L_indexing off: the tree gets no gradient at all, as in one process (AdamW must skip it)
    "ehi_no_indexing": dict(epochs=1, batch_size=5, lambda_indexing=0.0),
    # the DE baseline: no tree, hard negatives from its own exact top-k, InfoNCE
    "de": dict(epochs=2, batch_size=5, use_tree=False, siamese_loss="infonce"),
}


def no_dropout_encoder():
    enc = encoder()
    for module in enc.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
    return enc


def run_all(out: Path) -> None:
    """Train every configuration into out/<name>, plus EHI stopped after one epoch and resumed;
    encode the corpus into shards of 5 documents (7 shards: ranks take turns)."""
    from ehi.data.dataset import doc_texts
    from ehi.search.shards import encode_shards

    data = tiny_dataset()
    encode_shards(doc_texts(data.corpus), encoder(), out / "shards", shard_size=5, batch_size=4)
    for name, kw in CONFIGS.items():
        train(data, no_dropout_encoder(), config(**kw), out / name, progress=False)
    part = out / "ehi_resumed"
    train(data, no_dropout_encoder(), config(**CONFIGS["ehi"]), part, stop_after_epoch=1, progress=False)
    train(data, no_dropout_encoder(), config(**CONFIGS["ehi"]), part, progress=False)


def first_step_gradients(name: str) -> dict[str, torch.Tensor]:
    """The gradients after the first step's backward (DDP-averaged under torchrun); parameters
    without a gradient are absent."""
    from ehi.train import distributed
    from ehi.model.tree import TreeIndexer
    from ehi.train.batches import TrainData, refresh_cache
    from ehi.train.step import train_step

    cfg, cpu = config(**CONFIGS[name]), torch.device("cpu")
    data = TrainData.from_dataset(tiny_dataset())
    enc = no_dropout_encoder()
    torch.manual_seed(cfg.seed)
    tree = TreeIndexer(enc.dim, cfg.height, cfg.branching) if cfg.use_tree else None
    cache = refresh_cache(data, enc, tree, cfg)
    tree_used = cfg.use_tree and (cfg.lambda_indexing > 0 or cfg.lambda_neighbour > 0)
    towers = distributed.wrap(enc, tree, cpu, tree_used) if distributed.context().active else None
    enc.train()
    batch = np.random.default_rng([cfg.seed, 0]).permutation(len(data.pair_q))[: cfg.batch_size]
    terms, _ = train_step(batch, data, cache, np.random.default_rng([cfg.seed, 0, 0]), enc, tree, cfg, cpu, towers)
    terms["loss"].backward()
    named = [*enc.named_parameters(), *((f"tree.{k}", p) for k, p in (tree.named_parameters() if tree else []))]
    return {k: p.grad.detach().clone() for k, p in named if p.grad is not None}


def weights(run_dir: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    out = load_file(str(run_dir / "encoder" / "model.safetensors"))
    if (run_dir / "indexer.safetensors").exists():
        out.update({f"tree.{k}": v for k, v in load_file(str(run_dir / "indexer.safetensors")).items()})
    return out


def assert_close(a: dict, b: dict, atol: float) -> None:
    assert a.keys() == b.keys()
    worst = max(float((a[k] - b[k]).abs().max()) for k in a)
    assert worst <= atol, f"largest weight difference {worst:.3g} > {atol}"


def test_shard_bounds_split_like_array_split_and_cover_every_row():
    for n in (0, 1, 2, 5, 17, 100):
        for world in (1, 2, 3, 8):
            bounds = [shard_bounds(n, Context(r, world)) for r in range(world)]
            expected = np.array_split(np.arange(n), world)
            assert [b - a for a, b in bounds] == [len(e) for e in expected] == shard_sizes(n, world)
            assert all(n == 0 or len(e) == 0 or (e[0], e[-1] + 1) == ab for e, ab in zip(expected, bounds))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The two-process runs (torchrun, gloo) and the single-process runs of CONFIGS."""
    root = tmp_path_factory.mktemp("distributed")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "OMP_NUM_THREADS": "1",
           "TOKENIZERS_PARALLELISM": "false", "CUDA_VISIBLE_DEVICES": ""}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
           __file__, str(root / "ddp")]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    torch.set_num_threads(1)
    run_all(root / "single")
    return root


def test_two_processes_ran_as_one_gloo_group(runs):
    ranks = [json.loads((runs / "ddp" / f"rank{r}.json").read_text()) for r in range(2)]
    assert [r["rank"] for r in ranks] == [0, 1]
    assert all(r["world"] == 2 and r["backend"] == "gloo" for r in ranks)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_averaged_two_process_gradient_is_the_single_process_gradient(runs, name):
    from safetensors.torch import load_file

    ddp = load_file(str(runs / "ddp" / f"grads_{name}.safetensors"))
    single = first_step_gradients(name)
    assert ddp.keys() == single.keys()  # the same parameters get a gradient (the tree: only with L_indexing)
    scale = max(float(g.abs().max()) for g in single.values())
    assert_close(ddp, single, atol=1e-5 * scale)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_two_process_run_ends_with_the_single_process_weights(runs, name):
    assert_close(weights(runs / "ddp" / name), weights(runs / "single" / name), atol=1e-5)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_two_process_training_log_matches_the_single_process_log(runs, name):
    a = pd.read_parquet(runs / "ddp" / name / "train_log.parquet").drop(columns="seconds")
    b = pd.read_parquet(runs / "single" / name / "train_log.parquet").drop(columns="seconds")
    pd.testing.assert_frame_equal(a, b, atol=1e-5, rtol=1e-4)


def test_a_tree_without_gradient_stays_exactly_as_in_one_process(runs):
    # L_indexing off and L_neighbour off: no gradient reaches the tree, so AdamW (which skips
    # parameters without a gradient, weight decay included) must not move it in either run
    fresh = weights(runs / "single" / "ehi_no_indexing")
    ddp = weights(runs / "ddp" / "ehi_no_indexing")
    tree_keys = [k for k in fresh if k.startswith("tree.")]
    assert tree_keys and all(torch.equal(fresh[k], ddp[k]) for k in tree_keys)


def test_resumed_two_process_run_ends_with_the_same_weights(runs):
    a, b = weights(runs / "ddp" / "ehi"), weights(runs / "ddp" / "ehi_resumed")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_shards_encoded_by_two_ranks_equal_the_single_process_shards(runs):
    from ehi.search.shards import EmbeddingShards

    ddp, single = EmbeddingShards(runs / "ddp" / "shards"), EmbeddingShards(runs / "single" / "shards")
    assert len(ddp) == 7 and ddp.n_rows == 32
    ddp.verify()
    np.testing.assert_array_equal(ddp.to_array(), single.to_array())


def test_only_rank_zero_wrote_the_run_directory(runs):
    for name in CONFIGS:
        ddp, single = runs / "ddp" / name, runs / "single" / name
        listing = lambda d: sorted(str(p.relative_to(d)) for p in d.rglob("*"))  # noqa: E731
        assert listing(ddp) == listing(single)  # no per-rank copies, no stray temporary files


def test_train_rules_launch_torchrun_with_one_process_per_requested_gpu(tmp_path):
    repo = Path(__file__).resolve().parents[2]
    gpus = tmp_path / "gpus.yaml"
    gpus.write_text("resources:\n  gpus_per_train: 2\n")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}

    def dry_run(*configs):
        cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(repo / "Snakefile"), "--directory",
               str(tmp_path), "-n", "-p", "train_all", "--configfile", str(repo / "config" / "test" / "test.yaml"), *configs]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return [line for line in proc.stdout.splitlines() if '"$EHI_TRAIN_SCRIPT"' in line]

    two = dry_run(str(gpus))
    assert two and all("if [ 2 -gt 1 ]" in c and "torch.distributed.run --standalone --nproc_per_node 2" in c
                       for c in two)
    one = dry_run()  # the default (0): one plain process
    assert one and all("if [ 1 -gt 1 ]" in c for c in one)


if __name__ == "__main__":  # the worker: one rank of the torchrun launch above
    import torch.distributed as dist
    from safetensors.torch import save_file

    from ehi.train.distributed import init_from_env

    out_dir = Path(sys.argv[1])
    ctx = init_from_env("cpu")
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"rank{ctx.rank}.json").write_text(
        json.dumps({"rank": ctx.rank, "world": ctx.world, "backend": dist.get_backend()}))
    torch.set_num_threads(1)
    for name in CONFIGS:
        grads = first_step_gradients(name)
        if ctx.is_main:
            save_file(grads, str(out_dir / f"grads_{name}.safetensors"))
    run_all(out_dir)
    dist.destroy_process_group()
