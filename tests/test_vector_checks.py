"""The checks of a config over precomputed vectors (ehi/vector_checks.py), the encoder's identity
as a rule param (ehi/core/fingerprint.py) and the refusal of ScaNN systems without ScaNN, case by
case; tests/workflow/test_vectors_road.py runs the first through `snakemake -n`."""

import importlib.util
import shutil
from pathlib import Path

import pytest

from ehi.core.errors import ConfigError
from ehi.core.fingerprint import encoder_identity, folder_digest
from ehi.data.vector_world import WorldConfig, generate_world
from ehi.model.tower import write_tower_spec
from ehi.search.registry import check_systems
from ehi.vector_checks import (check_pre_baselines, check_trainable_encoder, check_vector_dataset_name,
                               check_vector_encoder, check_vectors_folder)

SCHEMA = Path(__file__).resolve().parents[1] / "workflow" / "schemas" / "config.schema.yaml"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    out = tmp_path_factory.mktemp("vectors") / "mine"
    generate_world(out, WorldConfig(n_docs=100, dim=8, n_train=10, n_dev=10, n_test=10))
    return out


def config(source="embeddings", encoder="tiny-random", systems=("pre+exact", "ehi+tree"), name="mine"):
    return {"dataset": {"name": name, "source": source, "path": "/data"}, "encoder": {"name": str(encoder)},
            "search": {"systems": list(systems)}, "ablation_systems": ["ehi+tree"]}


def test_the_encoder_over_vectors_is_a_tower_and_a_tower_reads_vectors_only(world):
    with pytest.raises(ConfigError, match="'tiny-random' is a text encoder, but dataset.source embeddings"):
        check_vector_encoder(config())
    with pytest.raises(ConfigError, match="is a vector tower, which reads dataset.source embeddings only"):
        check_vector_encoder(config(source="beir", encoder=world))
    with pytest.raises(ConfigError, match="'owner/model' is a text encoder"):
        check_vector_encoder(config(encoder="owner/model"))
    check_vector_encoder(config(encoder=world))
    check_vector_encoder(config(source="beir"))
    # a tower a rule has not written yet (or a fresh clone's): left to the job
    check_vector_encoder(config(encoder="resources/worlds/n1e4_linear"))


def test_a_dual_encoder_needs_a_tower_that_trains(world, tmp_path):
    de = ("pre+exact", "de+exact", "ehi+tree")
    with pytest.raises(ConfigError, match="identity tower has no weights"):
        check_trainable_encoder(config(encoder=world, systems=de), {"train": {"freeze_layers": 0}})
    linear = write_tower_spec(tmp_path / "linear", world, kind="linear")
    with pytest.raises(ConfigError, match="train.freeze_layers 6 freezes the whole tower"):
        check_trainable_encoder(config(encoder=linear, systems=de), {"train": {"freeze_layers": 6}})
    check_trainable_encoder(config(encoder=linear, systems=de), {"train": {"freeze_layers": 0}})
    check_trainable_encoder(config(encoder=world), {"train": {"freeze_layers": 6}})  # no de+ system



def test_the_searches_of_the_vectors_as_given_are_baselines_only_where_no_encoder_trains(world, tmp_path):
    def pre_baselines(encoder, freeze_layers):
        check_pre_baselines({**config(encoder=encoder), "evaluation": {"pre_baselines": True}},
                            {"train": {"freeze_layers": 0}, "floor": {"freeze_layers": freeze_layers}})

    pre_baselines(world, 0)  # the identity tower: nothing to train
    linear = write_tower_spec(tmp_path / "linear", world, kind="linear")
    with pytest.raises(ConfigError, match=r"^config evaluation.pre_baselines: .* but train.freeze_layers 0 trains "
                                          "the linear tower; leave it false$"):
        pre_baselines(linear, 6)
    with pytest.raises(ConfigError, match="'tiny-random' is a text encoder"):
        pre_baselines("tiny-random", 6)
    check_pre_baselines({**config(encoder="tiny-random"), "evaluation": {}}, {"train": {}})  # unset: no check

def test_a_vectors_dataset_names_itself():
    layered = {"config/config.yaml": {"dataset": {"name": "synthetic", "source": "synthetic"}},
               "my.yaml": {"dataset": {"source": "embeddings", "path": "/data"}}}
    with pytest.raises(ConfigError, match="'synthetic' is set by config/config.yaml, for another dataset"):
        check_vector_dataset_name(config(name="synthetic"), layered, SCHEMA)
    check_vector_dataset_name(config(name="mine"), layered, SCHEMA)  # --config dataset={name: mine}
    own = {"my.yaml": {"dataset": {"name": "mine", "source": "embeddings", "path": "/data"}}}
    check_vector_dataset_name(config(name="mine"), own, SCHEMA)
    with pytest.raises(ConfigError, match="not the default 'synthetic'"):
        check_vector_dataset_name(config(name="synthetic"), {"my.yaml": {"dataset": {"source": "embeddings"}}}, SCHEMA)
    check_vector_dataset_name(config(source="synthetic", name="synthetic"), layered, SCHEMA)


def test_the_encoder_identity_follows_the_folder_contents_not_its_place(world, tmp_path):
    assert encoder_identity("all-MiniLM-L6-v2") == "all-MiniLM-L6-v2"
    tower = write_tower_spec(tmp_path / "tower", world, kind="linear")
    first = encoder_identity(str(tower))
    assert first.startswith(f"{tower}@") and first != encoder_identity(str(world))
    copy = shutil.copytree(tower, tmp_path / "copy")
    assert folder_digest(copy) == folder_digest(tower)
    (tower / "model.safetensors").write_bytes(b"other weights")
    assert encoder_identity(str(tower)) != first


def test_scann_systems_without_scann_name_the_extra(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "scann" else real(name, *a))
    with pytest.raises(ConfigError, match=r"\['ehi\+scann'\] need scann, which is not installed: pip install 'ehi\[scann\]'"):
        check_systems(["pre+exact", "ehi+scann"])
    check_systems(["pre+exact", "ehi+faiss-ivf"])


def test_a_missing_vectors_folder_is_no_such_folder_not_a_hub_id(world, tmp_path, monkeypatch):
    """The folder a vectors dataset reads must be there (or written by a rule of the DAG): its refusal
    names the folder and, for a relative path, the working directory it was read from."""
    monkeypatch.chdir(tmp_path)
    dataset = {"name": "mine", "source": "embeddings", "path": "mine"}
    with pytest.raises(ConfigError) as refused:
        check_vectors_folder(dataset)
    assert str(refused.value) == (f"config dataset.path: no such folder: {tmp_path / 'mine'} "
                                  f"('mine' read from the working directory {tmp_path})")
    with pytest.raises(ConfigError, match=f"^config dataset.path: no such folder: {tmp_path / 'gone'}$"):
        check_vectors_folder({**dataset, "path": str(tmp_path / "gone")})
    check_vectors_folder({**dataset, "path": str(world)})
    check_vectors_folder({**dataset, "path": "resources/worlds/n1e4"}, produced={"resources/worlds/n1e4": ("worlds", "n1e4")})
    check_vectors_folder({"name": "test", "source": "synthetic"})
