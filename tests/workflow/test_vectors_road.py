"""The road of a researcher with precomputed vectors (docs/embeddings.md), through `snakemake`
itself: each contradiction met on it is refused at the dry run in one line, and rule embed reruns
when the encoder changes. (Each of these ran before: to a results folder of another dataset, to a
table of zeros, to a traceback in train_de, and to embeddings of the previous encoder.)"""

import numpy as np
import pytest

from ehi.data.vector_world import WorldConfig, generate_world
from ehi.model.tower import write_tower_spec
from tests.workflow.test_config_refusals import one_line_refusal
from tests.workflow.test_workflow import REPO, TEST_CONFIG, snakemake

DEFAULT_CONFIG = str(REPO / "config" / "config.yaml")
VECTOR_SYSTEMS = "search: {systems: [pre+exact, ehi+tree, ehi+faiss-ivf]}\n"

@pytest.fixture(scope="module")
def world(tmp_path_factory):
    out = tmp_path_factory.mktemp("vectors") / "mine"
    generate_world(out, WorldConfig(n_docs=300, dim=16, n_train=60, n_dev=30, n_test=30))
    return out

def dry_run_refusal(tmp_path, text, *configs):
    case = tmp_path / "case.yaml"
    case.write_text(text)
    workdir = tmp_path / "work"
    proc = snakemake("-n", "all", "--configfile", *configs, str(case), workdir=workdir, check=False)
    return one_line_refusal(proc, workdir)

def test_the_docs_snippet_layered_on_the_default_cannot_land_on_its_results(tmp_path, world):
    # the name comes with config/config.yaml's synthetic dataset: its committed results would be rewritten
    text = f"dataset: {{source: embeddings, path: {world}}}\nencoder: {{name: {world}}}\n{VECTOR_SYSTEMS}"
    refusal = dry_run_refusal(tmp_path, text, DEFAULT_CONFIG)
    assert "config dataset.name: 'synthetic' is set by" in refusal and "a name of their own" in refusal

def test_a_text_encoder_over_vectors_is_refused(tmp_path, world):
    text = f"dataset: {{name: mine, source: embeddings, path: {world}}}\n{VECTOR_SYSTEMS}"
    refusal = dry_run_refusal(tmp_path, text, TEST_CONFIG)
    assert "config encoder.name: 'tiny-random' is a text encoder, but dataset.source embeddings holds vectors" in refusal

def test_a_dual_encoder_over_a_frozen_tower_is_refused(tmp_path, world):
    text = (f"dataset: {{name: mine, source: embeddings, path: {world}}}\nencoder: {{name: {world}}}\n"
            "train: {freeze_layers: 6}\nsearch: {systems: [pre+exact, de+exact, ehi+tree]}\n")
    refusal = dry_run_refusal(tmp_path, text, TEST_CONFIG)
    assert "config search.systems: de+exact train(s) the dual encoder, but the identity tower has no weights" in refusal

def test_embed_reruns_when_the_encoder_changes(tmp_path, world):
    """Two runs of rule embed on the untrained encoder: the vectors as given, then a linear tower
    over them whose map is not the identity; the second run's embeddings are the tower's."""
    from safetensors.numpy import save_file

    tower = write_tower_spec(tmp_path / "tower", world, kind="linear")
    rng = np.random.default_rng(0)
    save_file({"tower.weight": rng.normal(size=(16, 16)).astype(np.float32),
               "tower.bias": np.zeros(16, np.float32)}, str(tower / "model.safetensors"))
    workdir = tmp_path / "work"
    target = "resources/mine/main/pre/emb/corpus.npy"
    embeddings = []
    for encoder in (world, tower):
        case = tmp_path / "case.yaml"
        case.write_text(f"dataset: {{name: mine, source: embeddings, path: {world}}}\nencoder: {{name: {encoder}}}\n"
                        f"{VECTOR_SYSTEMS}")
        snakemake("--cores", "1", target, "--configfile", TEST_CONFIG, str(case), workdir=workdir)
        embeddings.append(np.load(workdir / target))
    docs = np.load(world / "docs.npy")
    as_given = docs / np.linalg.norm(docs, axis=1, keepdims=True)
    np.testing.assert_allclose(embeddings[0], as_given, atol=1e-5)
    assert not np.allclose(embeddings[1], as_given, atol=1e-2)  # rerun through the tower, not the first run's file
    # and a tower retrained in place (same folder, other weights) reruns it too
    save_file({"tower.weight": rng.normal(size=(16, 16)).astype(np.float32),
               "tower.bias": np.zeros(16, np.float32)}, str(tower / "model.safetensors"))
    snakemake("--cores", "1", target, "--configfile", TEST_CONFIG, str(case), workdir=workdir)
    assert not np.allclose(np.load(workdir / target), embeddings[1], atol=1e-2)
