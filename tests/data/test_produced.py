"""ehi.data.produced: which rule output a dataset's folders come from."""

import pytest

from ehi.core.errors import UserError
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
