"""search.lists_from_leaf_count: IVF's and ScaNN's list counts tried on dev are the grid the tree's
leaf count was chosen from, and the setting changes only the list-partitioning searches' params."""

from ehi.search.config import SearchConfig
from ehi.search.grids import with_leaf_count_grid
from ehi.search.registry import rule_settings
from ehi.search.tune import default_grid

SEARCH = SearchConfig().to_dict()
LEAF_COUNT = {"branching": 1152, "grid": [36, 72, 144, 288, 576, 1152]}


def test_the_grid_of_the_leaf_count_becomes_ivf_and_scann_candidates():
    on = with_leaf_count_grid({**SEARCH, "lists_from_leaf_count": True}, LEAF_COUNT)
    settings = SearchConfig.from_dict(on)
    assert [g["nlist"] for g in default_grid("faiss-ivf", 5183, settings)] == LEAF_COUNT["grid"]
    assert [g["num_leaves"] for g in default_grid("scann", 5183, settings)] == LEAF_COUNT["grid"]
    assert with_leaf_count_grid(SEARCH, LEAF_COUNT) == SEARCH  # off: the config's own grids


def test_only_list_partitioning_searches_read_it_and_off_changes_no_params():
    on = {**SEARCH, "lists_from_leaf_count": True}
    for system in ("ehi+faiss-ivf", "de+scann", "de+scann-ah", "de+faiss-ivfpq"):
        assert rule_settings(on, system)["lists_from_leaf_count"] is True, system
    for system in ("ehi+tree", "de+faiss-hnsw", "pre+exact"):
        assert rule_settings(on, system) == rule_settings(SEARCH, system), system
    assert "lists_from_leaf_count" not in rule_settings(SEARCH, "de+faiss-ivf")  # runs without it keep their params


def test_scann_leaves_beside_it_is_refused():
    from tests.test_config_checks import config, refused

    why = refused(config({"search": {"lists_from_leaf_count": True, "scann_leaves": [8, 16]}}))
    assert why.startswith("config search.scann_leaves: with search.lists_from_leaf_count")


def test_the_work_cost_enters_every_search_only_when_set():
    for system in ("de+faiss-ivf", "de+exact", "ehi+tree"):
        assert "budget_cost" not in rule_settings(SEARCH, system)
        assert "budget_cost" not in rule_settings({**SEARCH, "budget_cost": "documents"}, system)
        # every search records its routing under "work", so each reruns when it is set
        assert rule_settings({**SEARCH, "budget_cost": "work"}, system)["budget_cost"] == "work"
