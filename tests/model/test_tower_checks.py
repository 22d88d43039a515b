"""ehi.model.tower_checks: a tower folder whose spec, weights or vectors cannot serve the dataset is
refused in one line naming it, before any job (the checks run while the Snakefile is parsed)."""

import json

import numpy as np
import pytest

from ehi.core.errors import ConfigError
from ehi.data.vector_world import WorldConfig, generate_world
from ehi.model.tower import load_tower, write_tower_spec
from ehi.model.tower_checks import check_tower

SMALL = dict(n_docs=300, dim=8, n_topics=2, subtopics_per_topic=2, n_train=20, n_dev=5, n_test=10)


@pytest.fixture()
def worlds(tmp_path):
    """The dataset's world, a copy of it elsewhere, one of another seed and one of another width."""
    made = {}
    for name, knobs in {"own": {}, "copy": {}, "seed": {"seed": 1}, "wide": {"dim": 16}}.items():
        generate_world(tmp_path / name, WorldConfig(**{**SMALL, **knobs}))
        made[name] = tmp_path / name
    return made


def _dataset(path):
    return {"name": "w", "source": "embeddings", "path": str(path)}


def test_a_tower_on_the_datasets_own_vectors_or_a_copy_of_them_passes(worlds, tmp_path):
    for vectors in ("own", "copy"):
        check_tower(str(write_tower_spec(tmp_path / f"t_{vectors}", worlds[vectors], kind="linear")), _dataset(worlds["own"]))


@pytest.mark.parametrize("other, says", [("seed", "holds other vectors than the dataset's"), ("wide", "16-d, the dataset's 8-d")])
def test_a_tower_on_another_worlds_vectors_is_refused(worlds, tmp_path, other, says):
    tower = write_tower_spec(tmp_path / "t", worlds[other], kind="linear")
    with pytest.raises(ConfigError, match=says):
        check_tower(str(tower), _dataset(worlds["own"]))


def test_a_tower_on_other_ids_is_refused(worlds, tmp_path):
    ids = worlds["copy"] / "doc_ids.txt"
    ids.write_text(ids.read_text().replace("doc0\n", "docX\n"))
    with pytest.raises(ConfigError, match="its doc_ids.txt is not the dataset's"):
        check_tower(str(write_tower_spec(tmp_path / "t", worlds["copy"])), _dataset(worlds["own"]))


def test_a_tower_on_a_text_dataset_is_refused(worlds, tmp_path):
    with pytest.raises(ConfigError, match="reads datasets of source embeddings only"):
        check_tower(str(write_tower_spec(tmp_path / "t", worlds["own"])), {"name": "s", "source": "synthetic"})


@pytest.mark.parametrize("spec, says", [
    ("[1, 2]", "not an object"), ('{"kind": "linear"}', "no vectors"), ("{not json", "not a readable JSON"),
    ('{"vectors": "VEC", "kind": "cnn"}', "kind 'cnn'"), ('{"vectors": "VEC", "shared": "yes"}', "shared is 'yes'"),
    ('{"vectors": "VEC", "hidden": -3}', "hidden is -3"), ('{"vectors": "VEC", "depth": 2}', "unknown key"),
    ('{"vectors": "/no/such/folder"}', "not an embeddings folder"),
    ('{"vectors": "VEC", "dim": 5}', "dim is 5, but its vectors"),  # a width the vectors lack: late shape errors
    ('{"vectors": "VEC", "dim": 0}', "dim is 0, below 1"),
])
def test_a_bad_spec_is_refused_in_one_line_at_the_check_and_at_load(worlds, tmp_path, spec, says):
    tower = tmp_path / "t"
    tower.mkdir()
    (tower / "tower.json").write_text(spec.replace("VEC", str(worlds["own"])))
    for check in (lambda: check_tower(str(tower), _dataset(worlds["own"])), lambda: load_tower(tower)):
        with pytest.raises(ConfigError, match=says):
            check()


def test_a_linear_tower_of_zero_weights_is_refused(worlds, tmp_path):
    from safetensors.numpy import save_file

    tower = write_tower_spec(tmp_path / "t", worlds["own"], kind="linear")
    save_file({"tower.weight": np.zeros((8, 8), np.float32), "tower.bias": np.ones(8, np.float32)},
              str(tower / "model.safetensors"))
    with pytest.raises(ConfigError, match="all zeros"):
        check_tower(str(tower), _dataset(worlds["own"]))
    assert json.loads((tower / "tower.json").read_text())["kind"] == "linear"


def test_a_tower_that_maps_every_document_to_one_vector_is_named_in_a_warning(worlds, tmp_path, caplog):
    import logging

    docs = worlds["copy"] / "docs.npy"
    np.save(docs, np.repeat(np.load(docs)[:1], SMALL["n_docs"], axis=0))  # every document the same vector
    with caplog.at_level(logging.WARNING):
        load_tower(worlds["own"])
        assert "maps its first" not in caplog.text
        load_tower(worlds["copy"])
    assert f"tower {worlds['copy']} maps its first 256 documents to one vector" in caplog.text


@pytest.mark.parametrize("other, says", [("seed", "holds other vectors than the dataset's"), ("wide", "16-d, the dataset's 8-d")])
def test_a_towers_entry_over_another_worlds_vectors_is_refused_before_its_tower_is_written(worlds, tmp_path,
                                                                                           monkeypatch, other, says):
    monkeypatch.chdir(tmp_path)  # the entry's tower is resources/towers/<name>, not written yet
    towers = {"t": {"vectors": str(worlds[other]), "kind": "linear"}}
    with pytest.raises(ConfigError, match=f"config towers.t.vectors: the tower resources/towers/t reads the vectors of .*{says}"):
        check_tower("resources/towers/t", _dataset(worlds["own"]), towers)
    check_tower("resources/towers/t", _dataset(worlds["own"]), {"t": {"vectors": str(worlds["copy"])}})
    assert not (tmp_path / "resources").exists()


def test_a_towers_entry_is_checked_by_its_entry_not_by_a_tower_json_it_will_rewrite(worlds, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_tower_spec("resources/towers/t", worlds["seed"], kind="linear")  # written for the entry's old vectors
    check_tower("resources/towers/t", _dataset(worlds["own"]), {"t": {"vectors": str(worlds["own"])}})


@pytest.mark.parametrize("tensors, says", [
    ({"tower.weight": np.full((8, 8), np.nan, np.float32), "tower.bias": np.zeros(8, np.float32)}, "tower.weight holds NaN"),
    ({"tower.weight": np.eye(8, dtype=np.float32), "tower.bias": np.full(8, np.inf, np.float32)}, "tower.bias holds NaN or infinite"),
    ({"tower.weight": np.eye(4, dtype=np.float32), "tower.bias": np.zeros(4, np.float32)},
     r"over 8-d vectors: tower.bias \(4,\) \(expected \(8,\)\), tower.weight \(4, 4\)"),
    ({"tower.weight": np.eye(8, dtype=np.float32)}, r"tower.bias None \(expected \(8,\)\)"),
])
def test_tower_weights_not_finite_or_of_another_shape_are_refused_at_the_check_and_at_load(worlds, tmp_path, tensors, says):
    from safetensors.numpy import save_file

    tower = write_tower_spec(tmp_path / "t", worlds["own"], kind="linear")
    save_file(tensors, str(tower / "model.safetensors"))
    for check in (lambda: check_tower(str(tower), _dataset(worlds["own"])), lambda: load_tower(tower)):
        with pytest.raises(ConfigError, match=says):
            check()


def test_saved_linear_and_mlp_towers_pass_their_weight_checks(worlds, tmp_path):
    for kind, shared in (("linear", True), ("mlp", False)):
        load_tower(write_tower_spec(tmp_path / kind, worlds["own"], kind=kind, shared=shared)).save(tmp_path / f"{kind}_saved")
        check_tower(str(tmp_path / f"{kind}_saved"), _dataset(worlds["own"]))
