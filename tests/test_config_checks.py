"""Parse-time config checks: each case that used to fail in a job after training is a ConfigError
naming the key (tests/workflow/test_bad_input.py runs the same cases through `snakemake -n`)."""

import copy
import json
from pathlib import Path

import pytest
import yaml
from snakemake.utils import validate

from ehi.config_checks import METRIC_NAMES, NEEDS_CUTOFF, check_config, check_metrics
from ehi.core.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


def merged(base: dict, override: dict) -> dict:
    """``override`` layered over ``base`` the way Snakemake layers config files (dicts merge)."""
    out = copy.deepcopy(base)
    for key, value in override.items():
        out[key] = merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def config(override: dict | None = None, base: str = "test/test.yaml") -> dict:
    cfg = merged(yaml.safe_load((REPO / "config" / base).read_text()), override or {})
    validate(cfg, str(SCHEMA))  # fills the defaults, as the Snakefile does
    return cfg


def refused(cfg: dict, data_dir=None) -> str:
    with pytest.raises(ConfigError) as exc:
        check_config(cfg, SCHEMA, data_dir)
    return str(exc.value)


@pytest.mark.parametrize("name", ["config.yaml", "test/test.yaml", "scifact.yaml", "dexml.yaml", "paper/scifact.yaml",
                                  "paper/fiqa.yaml", "paper/nq320k.yaml"])
def test_every_shipped_config_passes(name):
    check_config(config(base=name), SCHEMA)


def test_beams_wider_than_the_tree_name_the_key_and_the_variant():
    # the test config's tree: H=2, B=4 -> 16 leaves; its tree_shape ablation row: H=1, B=8 -> 8 leaves
    assert "config search.ehi_beams: [17] exceed the tree's leaves (train.height=2, train.branching=4: 16 leaves)" \
        in refused(config({"search": {"ehi_beams": [1, 17]}}))
    assert "ablations.tree_shape[0].height=1, ablations.tree_shape[0].branching=8: 8 leaves" \
        in refused(config({"search": {"ehi_beams": [1, 12]}}))
    check_config(config({"search": {"ehi_beams": [1, 8]}}), SCHEMA)


def test_diagnostic_beam_and_too_many_leaves():
    assert "config train.diagnostic_beam: 99 exceeds the tree's leaves" in refused(config({"train": {"diagnostic_beam": 99}}))
    assert "config train.height=4, train.branching=4: 256 leaves, more than the corpus's 200 documents" \
        in refused(config({"train": {"height": 4}}))


@pytest.mark.parametrize("metric, why", [("ndcg@ten", "needs a cutoff of 1 or more"), ("ndcg@0", "needs a cutoff"),
                                         ("foo@10", "is not a known metric; known: hits"), ("psp", "needs a cutoff")])
def test_unknown_metric_names(metric, why):
    assert f"config evaluation.metrics: {metric!r}" in refused(config({"evaluation": {"metrics": ["ndcg@10", metric]}}))
    assert why in refused(config({"evaluation": {"metrics": [metric]}}))


def test_known_metric_names_are_the_ones_ranx_computes():
    from ranx.metrics import metric_switch

    for name in set(METRIC_NAMES) - set(NEEDS_CUTOFF):  # psp@k is ehi.evaluate.xmc's
        assert callable(metric_switch(name))
    check_metrics(["ndcg@10", "mrr@10", "recall@100", "precision@1", "psp@5", "map", "r-precision"])


@pytest.mark.parametrize("override, why", [
    ({"search": {"k": 50}}, "config search.k: 50 is below the cutoff of recall@100 in evaluation.metrics: each ranking "
                            "holds at most 50 documents, scored as if it held 100; raise search.k to 100 or drop recall@100"),
    ({"search": {"k": 1}, "evaluation": {"metrics": ["ndcg@10", "map"]}},
     "config search.k: 1 is below the cutoff of ndcg@10 in evaluation.metrics: each ranking holds at most 1 document, "
     "scored as if it held 10; raise search.k to 10 or drop ndcg@10"),
    ({"search": {"k": 5}, "evaluation": {"metrics": ["recall@10", "ndcg@5", "recall@100"]}},
     "config search.k: 5 is below the cutoffs of recall@10, recall@100 in evaluation.metrics"),
])
def test_a_ranking_shallower_than_a_metric_cutoff_is_refused(override, why):
    """Rankings of search.k documents scored at a deeper cutoff would be reported under its name
    (recall@100 of 50 documents): refused at parse time, naming both numbers and the fix."""
    assert refused(config(override)).startswith(why)


def test_a_ranking_as_deep_as_every_cutoff_is_accepted():
    check_config(config({"search": {"k": 10}, "evaluation": {"metrics": ["ndcg@10", "mrr@10", "map"]}}), SCHEMA)
    check_metrics(["ndcg@10", "recall@100"], k=100)
    check_metrics(["map", "r-precision"], k=1)  # whole-ranking metrics have no cutoff to fall short of


def test_every_dataset_of_the_multi_dataset_test_config_passes():
    from ehi.core.multi_config import dataset_configs

    shared = yaml.safe_load((REPO / "config" / "test" / "multi.yaml").read_text())
    for name, cfg in dataset_configs(shared).items():
        validate(cfg, str(SCHEMA))
        check_config(cfg, SCHEMA)


@pytest.mark.parametrize("row, why", [({"height": 0}, "config ablations.bad[0].height: 0 is less than the minimum of 1"),
                                      ({"epochs": "three"}, "config ablations.bad[0].epochs: 'three' is not of type 'integer'"),
                                      ({"heigth": 1}, "config ablations.bad[0]: Additional properties are not allowed")])
def test_ablation_rows_are_checked_against_the_train_schema(row, why):
    assert why in refused(config({"ablations": {"bad": [{"height": 1}, row]}})).replace("[1]", "[0]")


def test_tune_split_must_differ_from_the_evaluated_split():
    why = refused(config({"search": {"tune_split": "test"}}))
    assert why.startswith("config search.tune_split: 'test' is also evaluation.split") and "de+faiss-ivf" in why
    # nothing tuned (exact and tree searches only): the key is unused, so not refused
    check_config(config({"search": {"tune_split": "test", "systems": ["de+exact", "ehi+tree"]}, "ablations": {}}), SCHEMA)
    assert "unknown split 'valid'" in refused(config({"evaluation": {"split": "valid"}}))


def test_a_split_the_synthetic_generator_leaves_empty():
    no_test = {"dataset": {"synthetic": {"split_fractions": [0.8, 0.2, 0.0]}}}
    assert "config evaluation.split: dataset 'test' has no 'test' queries according to dataset.synthetic.split_fractions" \
        in refused(config(no_test))
    no_dev = {"dataset": {"synthetic": {"split_fractions": [0.8, 0.0, 0.2]}}}
    assert "config search.tune_split: dataset 'test' has no 'dev' queries" in refused(config(no_dev))
    check_config(config(merged(no_dev, {"dataset": {"dev_fraction": 0.2}})), SCHEMA)  # carved from train


def test_a_beir_copy_without_a_dev_split_under_the_default_tune_split(tmp_path):
    (tmp_path / "qrels").mkdir()
    for split in ("train", "test"):
        (tmp_path / "qrels" / f"{split}.tsv").write_text("query-id\tcorpus-id\tscore\n")
    beir = {"dataset": {"name": "mine", "source": "beir", "path": str(tmp_path)}}
    why = refused(config(beir))
    assert why.startswith("config search.tune_split: dataset 'mine' has no 'dev' queries according to the qrels files")
    assert "set dataset.dev_fraction" in why
    check_config(config(merged(beir, {"dataset": {"dev_fraction": 0.2}})), SCHEMA)


def test_a_prepared_dataset_is_judged_by_its_manifest(tmp_path):
    cfg = config()
    manifest = {"config": cfg["dataset"], "queries_per_split": {"train": 40, "test": 10}}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    assert "according to the prepared dataset" in refused(cfg, tmp_path)
    manifest["config"] = {**cfg["dataset"], "dev_seed": 99}  # prepared from another config: not this data
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    check_config(cfg, SCHEMA, tmp_path)


def test_dev_evaluation_needs_a_dev_split_and_dev_selection_needs_dev_evaluation():
    no_dev = {"dataset": {"synthetic": {"split_fractions": [0.8, 0.0, 0.2]}}, "search": {"tune_split": "train"}}
    check_config(config(no_dev), SCHEMA)
    assert "config train.dev_eval: dataset 'test' has no 'dev' queries" in refused(config(merged(no_dev, {"train": {"dev_eval": True}})))
    assert "config ablations.late[0].dev_eval: dataset 'test' has no 'dev' queries" in \
        refused(config(merged(no_dev, {"ablations": {"late": [{"dev_eval": True}]}})))
    assert refused(config({"train": {"select": "dev"}})) == "config train: select: dev needs dev_eval"


def test_a_manifest_recorded_without_an_unset_query_split_is_this_config(tmp_path):
    from ehi.config_checks import recorded_config

    cfg = config()
    assert "query_split" in cfg["dataset"] and cfg["dataset"]["query_split"] is None  # the schema fills it
    recorded = recorded_config(cfg["dataset"])  # what prepare_data writes: no query_split key
    assert "query_split" not in recorded
    (tmp_path / "manifest.json").write_text(json.dumps({"config": recorded, "queries_per_split": {"train": 4, "test": 2}}))
    assert "has no 'dev' queries according to the prepared dataset" in refused(cfg, tmp_path)


def test_train_seed_must_be_one_of_train_seeds():
    """seed 5 with seeds [1, 2] would train and average three seeds, one of them unlisted."""
    assert refused(config({"train": {"seed": 5, "seeds": [1, 2]}})) == (
        "config train.seed: 5 is not in train.seeds [1, 2]; the runs are train.seed's plus one per other listed "
        "seed, so list it (e.g. [5, 1, 2]) or set train.seed to one of them")
    assert "config ablations.s[0].seed: 7 is not in" in refused(
        config({"train": {"seeds": [0, 1]}, "ablations": {"s": [{"seed": 7}]}}))
    check_config(config({"train": {"seed": 2, "seeds": [1, 2]}}), SCHEMA)


def test_a_tower_on_another_worlds_vectors_is_refused_at_parse_time(tmp_path):
    from ehi.data.vector_world import WorldConfig, generate_world
    from ehi.model.tower import write_tower_spec

    small = dict(n_docs=200, dim=8, n_topics=2, subtopics_per_topic=2, n_train=20, n_dev=5, n_test=10)
    for name, seed in (("own", 0), ("other", 1)):
        generate_world(tmp_path / name, WorldConfig(**small, seed=seed))
    tower = write_tower_spec(tmp_path / "tower", tmp_path / "other", kind="linear")
    cfg = config({"dataset": {"name": "w", "source": "embeddings", "path": str(tmp_path / "own")},
                  "encoder": {"name": str(tower)}})
    assert "config encoder.name: the tower" in refused(cfg) and "sha256 differs" in refused(cfg)


def test_an_ablation_row_a_training_would_refuse_is_refused_by_the_training_config_rules():
    """Issue 68's row: the rule between floor and select_metric is TrainConfig's, applied to each row
    laid over the train section, not written a second time here."""
    assert refused(config({"ablations": {"floor": [{"floor": "kmeans"}]}})) == \
        "config ablations.floor[0]: floor: kmeans needs select_metric: kmr_auc"
    check_config(config({"ablations": {"floor": [{"floor": "kmeans", "select_metric": "kmr_auc"}]}}), SCHEMA)


def gridded(train: dict, ablations: dict | None = None) -> str:
    """What check_config says of a config whose train keys are ``{choose: [...]}`` grids, read as
    the Snakefile reads them (the first values validated, the grid handed to the checks)."""
    from ehi.train.grid import take_grid

    cfg = merged(yaml.safe_load((REPO / "config" / "test" / "test.yaml").read_text()),
                 {"train": train, "ablations": ablations or {}})
    grid = take_grid(cfg["train"])
    validate(cfg, str(SCHEMA))
    with pytest.raises(ConfigError) as exc:
        check_config(cfg, SCHEMA, grid=grid)
    return str(exc.value)


@pytest.mark.parametrize("train, says", [
    ({"lr_encoder": {"choose": [1.0e-4, -1.0]}}, "config train (grid point lr_encoder=-1.0).lr_encoder: -1.0 is less than"),
    ({"lr_encoder": {"choose": [1.0e-4, "fast"]}}, "config train (grid point lr_encoder='fast').lr_encoder: 'fast' is not of type"),
    ({"lr_encoder": {"choose": [1.0e-4, float("nan")]}},
     "config train (grid point lr_encoder=nan): key 'lr_encoder': nan is not a finite number"),
    ({"height": {"choose": [2, 6]}}, "config train (grid point height=6).height=6, train (grid point height=6).branching=4: "
                                     "4096 leaves, more than the corpus's 200 documents"),
    ({"height": {"choose": [2, 3]}, "branching": {"choose": [4, 8]}}, "(grid point height=3, branching=8).branching=8: 512 leaves"),
])
def test_every_value_of_a_grid_is_checked_as_the_first_is(train, says):
    assert says in gridded(train)


def test_a_grid_value_is_checked_in_each_ablation_row_that_does_not_set_its_key():
    said = gridded({"epochs": {"choose": [2, 0]}}, {"shape": [{"height": 1, "branching": 8}]})
    assert said.startswith("config train (grid point epochs=0).epochs: 0 is less than the minimum of 1")
    # a row that sets the gridded key itself trains at its own value only
    said = gridded({"height": {"choose": [2, 6]}}, {"shape": [{"height": 1, "branching": 8}]})
    assert said.startswith("config train (grid point height=6)") and "ablations.shape" not in said

