"""ehi.data.produced: which rule output a dataset's folders come from."""

import pytest

from ehi.core.errors import ConfigError, UserError
from ehi.core.dataset_source import name_dataset_source, name_dataset_sources
from ehi.data.produced import check_worlds, is_produced, produced_inputs, world_knobs


def test_a_dataset_waits_for_its_world_and_for_the_tower_file_its_encoder_names():
    config = {"worlds": {"w": {"n_docs": 100}}, "towers": {"t": {"vectors": "resources/worlds/w"}},
              "dataset": {"path": "resources/worlds/w/"}, "encoder": {"name": "resources/towers/t"}}
    assert produced_inputs(config) == ["resources/towers/t/tower.json", "resources/worlds/w"]
    assert is_produced(config, "resources/towers/t") and not is_produced(config, "resources/towers/other")


def test_a_folder_no_producer_names_is_not_an_input():
    assert produced_inputs({"dataset": {"path": "resources/worlds/w"}, "encoder": {"name": "all-MiniLM-L6-v2"}}) == []


def test_world_knobs_fill_the_defaults_and_refuse_unknown_keys():
    assert world_knobs({"n_docs": 7})["n_docs"] == 7 and world_knobs({})["query_noise"] == 0.6
    with pytest.raises(UserError, match="worlds entry 'w': unknown vector world key"):
        check_worlds({"w": {"ndocs": 7}})


@pytest.mark.parametrize("knobs, says", [
    ({"dim": 0}, "dim: 0 is below 1"), ({"n_docs": 1e6}, "not an integer"), ({"doc_noise": -1}, "doc_noise"),
    ({"dtype": "int8"}, "dtype"), ({"n_docs": 10 ** 13}, "of memory"),
])
def test_a_world_knob_out_of_range_is_refused_before_any_job_naming_the_entry(tmp_path, knobs, says):
    with pytest.raises(UserError, match=f"worlds entry 'w': vector world .*{says}"):
        check_worlds({"w": knobs}, root=tmp_path)
    assert not any(tmp_path.iterdir())  # checked, nothing allocated or written


def test_a_dataset_named_by_its_producer_reads_that_folder_and_its_identity_tower():
    config = {"dataset": {"world": "n1e4", "name": "world_1e4"}, "worlds": {"n1e4": {}}}
    assert name_dataset_source(config) == {
        "dataset": {"name": "world_1e4", "source": "embeddings", "path": "resources/worlds/n1e4"},
        "encoder": {"name": "resources/worlds/n1e4"}, "worlds": {"n1e4": {}}}
    # a tower the config names is kept: only the identity tower is implied
    config = {"dataset": {"encoding": "webster_minilm"}, "encoder": {"name": "resources/towers/webster_linear"},
              "encodings": {"webster_minilm": {}}}
    name_dataset_source(config)
    assert config["dataset"]["path"] == "resources/vectors/webster_minilm"
    assert config["encoder"]["name"] == "resources/towers/webster_linear"


def test_every_datasets_entry_is_named_and_a_second_source_beside_the_name_is_refused():
    config = name_dataset_sources({"datasets": {"a": {"dataset": {"world": "n1e5"}}, "b": None}, "worlds": {"n1e5": {}}})
    assert config["datasets"]["a"]["dataset"]["path"] == "resources/worlds/n1e5"
    assert config["datasets"]["a"]["encoder"]["name"] == "resources/worlds/n1e5"
    with pytest.raises(ConfigError, match=r"datasets\.c\.dataset: \['path', 'world'\] given together"):
        name_dataset_sources({"datasets": {"c": {"dataset": {"world": "n1e5", "path": "elsewhere"}}}})


@pytest.mark.parametrize("world, says", [
    ("n1e7", "config datasets.c.dataset.world: 'n1e7' is no world of this config's worlds: entries nor a folder "
             "under resources/worlds/; known: n1e4, n1e5"),
    (5, "config datasets.c.dataset.world: 5 is no world"),
])
def test_a_world_the_config_does_not_make_is_refused_naming_the_key_and_the_worlds(world, says, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no world written yet
    config = {"datasets": {"c": {"dataset": {"world": world}}}, "worlds": {"n1e4": {}, "n1e5": {}}}
    with pytest.raises(ConfigError) as err:
        name_dataset_sources(config)
    assert str(err.value).startswith(says) and "\n" not in str(err.value)
    (tmp_path / "resources" / "worlds" / "n1e7").mkdir(parents=True)  # written by another config's rule
    assert name_dataset_sources({**config, "datasets": {"c": {"dataset": {"world": "n1e7"}}}})


def test_a_shipped_multi_dataset_config_gives_its_worlds_by_name_and_each_entry_its_identity_tower():
    from ehi.core.config_files import read_config_file
    from ehi.core.multi_config import dataset_configs

    runs = dataset_configs(name_dataset_sources(read_config_file("config/scale_study.yaml")))
    assert runs["world_1e5"]["dataset"]["path"] == runs["world_1e5"]["encoder"]["name"] == "resources/worlds/n1e5"


def test_a_collection_a_tower_and_a_producers_inputs_are_named_like_encodings():
    """Every producer's entry is given by name and read as the catalog's folder for it, as a
    path-given config read it: collection -> beir folder, tower -> encoder.name, inputs -> folders."""
    config = name_dataset_sources({
        "collections": {"c": {"script": "build.py"}}, "worlds": {"w": {}},
        "encodings": {"e": {"collection": "c"}, "local": {"collection": "../elsewhere"}},
        "towers": {"t": {"vectors": "e"}, "u": {"vectors": "w"}},
        "dataset": {"name": "d", "encoding": "e"}, "encoder": {"tower": "t"},
        "datasets": {"x": {"dataset": {"collection": "c"}}, "y": {"encoder": {"tower": "u"}}}})
    assert config["encodings"] == {"e": {"collection": "resources/sources/c"}, "local": {"collection": "../elsewhere"}}
    assert config["towers"] == {"t": {"vectors": "resources/vectors/e"}, "u": {"vectors": "resources/worlds/w"}}
    assert config["dataset"] == {"name": "d", "source": "embeddings", "path": "resources/vectors/e"}
    assert config["encoder"] == {"name": "resources/towers/t"}  # the tower named, not the identity one
    assert config["datasets"]["x"] == {"dataset": {"source": "beir", "path": "resources/sources/c"}}  # no tower implied
    assert config["datasets"]["y"] == {"encoder": {"name": "resources/towers/u"}}


@pytest.mark.parametrize("config, says", [
    ({"encoder": {"tower": "t", "name": "all-MiniLM-L6-v2"}, "towers": {"t": {}}},
     "config encoder: tower and name given together"),
    ({"encoder": {"tower": "nope"}, "towers": {"t": {}}},
     "config encoder.tower: 'nope' is no tower of this config's towers: entries nor a folder under resources/towers/; "
     "known: t"),
    ({"datasets": {"x": {"dataset": {"collection": "c", "source": "beir"}}}, "collections": {"c": {}}},
     "config datasets.x.dataset: ['collection', 'source'] given together"),
    ({"towers": {"t": {"vectors": "v"}}, "worlds": {"v": {}}, "encodings": {"v": {}}},
     "config towers.t.vectors: 'v' names an entry of both encodings and worlds"),
])
def test_a_producer_name_that_names_nothing_or_too_much_is_refused_naming_the_key(config, says, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing written yet
    with pytest.raises(ConfigError) as err:
        name_dataset_sources(config)
    assert str(err.value).startswith(says) and "\n" not in str(err.value)
