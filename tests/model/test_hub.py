"""Hub encoders without the internet: a pre-filled Hugging Face cache loads with the hub
unreachable (and never asks it), an empty cache fails in one line, and HF_HUB_OFFLINE=1 set by the
user forbids the download. The hub is a closed port on 127.0.0.1, so nothing leaves the machine."""

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

REPO = "ehi-test/tiny-encoder"

CHILD = """
import sys
import torch
from ehi.core.errors import ConfigError
from ehi.model.encoder import load_encoder
cached = load_encoder(sys.argv[1], max_length=16, device="cpu")
saved = load_encoder(sys.argv[2], max_length=16, device="cpu")
torch.testing.assert_close(cached(["a b c"]), saved(["a b c"]))
try:
    load_encoder("ehi-test/not-cached", device="cpu")
except ConfigError as err:
    print("REFUSED", err)
"""


def closed_port() -> int:
    """A 127.0.0.1 port nobody listens on: connecting to it fails at once."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def prefill_cache(cache: Path, repo_id: str, folder: Path) -> None:
    """The Hugging Face cache layout: models--<org>--<name>/{refs/main, snapshots/<commit>/...}."""
    commit = "0123456789abcdef0123456789abcdef01234567"
    root = cache / f"models--{repo_id.replace('/', '--')}"
    (root / "refs").mkdir(parents=True)
    (root / "refs" / "main").write_text(commit)
    shutil.copytree(folder, root / "snapshots" / commit)


@pytest.fixture(scope="module")
def saved_encoder(tmp_path_factory) -> Path:
    from ehi.model.encoder import load_encoder

    folder = tmp_path_factory.mktemp("enc") / "tiny"
    load_encoder("tiny-random", max_length=16, device="cpu").save(folder)
    return folder


def run_child(tmp_path: Path, saved: Path, offline: str) -> subprocess.CompletedProcess:
    prefill_cache(tmp_path / "hub", REPO, saved)
    env = {**os.environ, "HF_HUB_OFFLINE": offline, "HF_HUB_CACHE": str(tmp_path / "hub"),
           "HF_ENDPOINT": f"http://127.0.0.1:{closed_port()}", "HF_HUB_ETAG_TIMEOUT": "2",
           "HF_HUB_DOWNLOAD_TIMEOUT": "2", "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-c", CHILD, REPO, str(saved)], env=env, capture_output=True,
                          text=True, timeout=300)


@pytest.mark.slow  # a fresh interpreter each, loading an encoder
@pytest.mark.parametrize("offline", ["0", "1"])
def test_cached_hub_encoder_loads_with_the_hub_unreachable(tmp_path, saved_encoder, offline):
    proc = run_child(tmp_path, saved_encoder, offline)
    assert proc.returncode == 0, proc.stderr[-3000:]
    refusal = proc.stdout.split("REFUSED", 1)[1].strip()
    assert "\n" not in refusal and refusal.startswith("config encoder.name: ")
    if offline == "1":
        assert "'ehi-test/not-cached' is not in the Hugging Face cache and HF_HUB_OFFLINE=1" in refusal
    else:  # the download was tried, and its failure names the id and what to do
        assert "cannot download 'ehi-test/not-cached' from the Hugging Face hub" in refusal
        assert "local model folder" in refusal
