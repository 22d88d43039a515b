"""Test-wide settings: no hub look-ups (they retry for a minute before failing), a fixed repo root,
each test's tier (tests/tiers.py)."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from ehi.core.kernels import pin_kernels

pin_kernels()  # the kernels the pipeline runs on (ehi/core/kernels.py), before any test imports torch

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from tests.tiers import TIERS, in_default_set, mark_tiers, refuse_snakemake  # noqa: E402
from tests.workflow.runs import load_run, run_test_config  # noqa: E402

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
    if os.environ.get("EHI_TEST_CONFIG_RUN"):  # a finished run's folder, reused (tests/workflow/runs.py)
        return load_run(Path(os.environ["EHI_TEST_CONFIG_RUN"]))
    return run_test_config(tmp_path_factory.mktemp("test_config"))



@pytest.hookimpl(tryfirst=True)  # before -m reads the marks
def pytest_collection_modifyitems(config, items):
    config.stash[TIERS] = mark_tiers(items)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    with refuse_snakemake(in_default_set(item)):
        return (yield)
