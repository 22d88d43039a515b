"""Test-wide settings: no hub look-ups (they retry for a minute before failing), a fixed repo root."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from ehi.core.kernels import pin_kernels

pin_kernels()  # the kernels the pipeline runs on (ehi/core/kernels.py), before any test imports torch

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
SCIFACT = (REPO_ROOT / ".." / "shared" / "data" / "scifact").resolve()


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def tiny_dataset():
    """A seeded 200-document synthetic dataset (the test config's)."""
    from ehi.data.synthetic import SyntheticConfig, generate

    return generate(SyntheticConfig(n_docs=200, n_queries=60, n_topics=2, n_subtopics=4))


@pytest.fixture(scope="session")
def test_config_run(tmp_path_factory):
    """The test config's whole DAG, once per session (tests/workflow/runs.py): its working folder,
    console and the style facts of the figures it drew."""
    import sys

    sys.path.insert(0, str(REPO_ROOT / "tests" / "workflow"))
    from runs import load_run, run_test_config

    if os.environ.get("EHI_TEST_CONFIG_RUN"):  # a finished run's folder, reused (tests/workflow/runs.py)
        return load_run(Path(os.environ["EHI_TEST_CONFIG_RUN"]))
    return run_test_config(tmp_path_factory.mktemp("test_config"))
