"""train.py --layer-cache-dir: the trainings of one dataset share one frozen-layer cache (computed
once), and a shared cache trains exactly what a run's own cache trains."""

import subprocess
import sys

import pytest
from safetensors.numpy import load_file

from tests.train.test_loop import config, tiny_dataset


def run(repo_root, data, out, *extra):
    args = ["--data-dir", str(data), "--encoder", "tiny-random", "--out-dir", str(out), "--log-table", str(out) + ".parquet",
            "--train", repr(config(epochs=1, dev_eval=False, freeze_layers=1).to_dict()), *extra]
    proc = subprocess.run([sys.executable, str(repo_root / "workflow" / "scripts" / "train.py"), *args],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]


@pytest.mark.slow  # three trainings in fresh interpreters
def test_two_trainings_share_one_cache_and_train_as_with_their_own(tmp_path, repo_root):
    tiny_dataset().write(tmp_path / "data")
    shared = tmp_path / "cache"
    run(repo_root, tmp_path / "data", tmp_path / "a", "--layer-cache-dir", str(shared))
    (folder,) = shared.iterdir()
    hidden = folder / "corpus" / "hidden.npy"
    built = hidden.stat().st_mtime_ns
    run(repo_root, tmp_path / "data", tmp_path / "b", "--layer-cache-dir", str(shared))
    for name in ("a", "b"):
        assert (tmp_path / name / "layer_cache").resolve() == folder.resolve()
    assert hidden.stat().st_mtime_ns == built  # the second training read the first one's cache
    run(repo_root, tmp_path / "data", tmp_path / "own")
    assert not (tmp_path / "own" / "layer_cache").is_symlink()
    own, shared_run = load_file(tmp_path / "own" / "indexer.safetensors"), load_file(tmp_path / "b" / "indexer.safetensors")
    assert own.keys() == shared_run.keys() and all((own[k] == shared_run[k]).all() for k in own)
