"""Config files and the schema, each refusal one line naming the file (and line) or the key:
a duplicated key, YAML that does not parse, a list or an empty file, and the schema's violations
(an unknown key names its nearest known one, not the whole schema)."""

import copy
from pathlib import Path

import pytest
import yaml

from ehi.core.config_files import key_source, read_config_file, read_config_files
from ehi.core.config_schema import schema_error, validate_config
from ehi.core.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
SCHEMA_PATH = REPO / "workflow" / "schemas" / "config.schema.yaml"
SCHEMA = yaml.safe_load(SCHEMA_PATH.read_text())
TEST_CONFIG = yaml.safe_load((REPO / "config" / "test" / "test.yaml").read_text())


def refused_file(tmp_path, text: str) -> str:
    path = tmp_path / "case.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as exc:
        read_config_file(path)
    message = str(exc.value)
    assert "\n" not in message and str(path) in message
    return message


@pytest.mark.parametrize("text, names", [
    ("train:\n  epochs: 1\n  epochs: 2\n", "line 3: key 'train.epochs' is given twice (first on line 2)"),
    ("train:\n  epochs: 1\nsearch: {k: 5}\ntrain:\n  height: 2\n", "line 4: key 'train' is given twice (first on line 1)"),
    ("ablations:\n  a:\n    - {height: 1, height: 2}\n", "line 3: key 'ablations.a[0].height' is given twice"),
    ("train:\n  epochs: [1\n", "line 3, column 1: not valid YAML"),
    ("train:\n\tepochs: 1\n", "line 2, column 1: not valid YAML"),
    ("- train\n- search\n", "line 1: a list, not a mapping of keys"),
    ("", "empty; a config file is a mapping of keys"),
    ("# nothing but a comment\n", "empty"),
    ("just words\n", "a str, not a mapping"),
], ids=["a key twice", "a block twice", "a key twice in a list item", "unclosed list", "a tab", "a list", "empty",
        "a comment only", "a scalar"])
def test_a_bad_config_file_is_one_line_naming_file_and_line(tmp_path, text, names):
    assert names in refused_file(tmp_path, text)


def test_every_shipped_config_file_reads_and_merge_keys_are_no_duplicates(tmp_path):
    read_config_files(sorted((REPO / "config").rglob("*.yaml")))
    (tmp_path / "merge.yaml").write_text("base: &b {epochs: 1}\ntrain:\n  <<: *b\n  height: 2\n")
    assert read_config_file(tmp_path / "merge.yaml")["train"] == {"epochs": 1, "height": 2}


def test_key_source_is_the_last_file_setting_the_key():
    files = {"a.yaml": {"train": {"height": 2}}, "b.yaml": {"train": {"epochs": 1}, "ablations": {"x": [{"height": 1}]}}}
    assert key_source(files, ("train", "height")) == "a.yaml"
    assert key_source(files, ("train",)) == "b.yaml"
    assert key_source(files, ("ablations", "x", 0, "height")) == "b.yaml"
    assert key_source(files, ("search", "k")) is None  # a default, or --config


def error_of(override: dict, files=None) -> str:
    config = copy.deepcopy(TEST_CONFIG)
    config.update(override)
    message = schema_error(config, SCHEMA, files)
    assert message is not None and "\n" not in message and len(message) < 400, message
    return message


@pytest.mark.parametrize("override, names", [
    ({"trian": {}}, "config trian: unknown key; did you mean 'train'? (set in case.yaml)"),
    ({"train": {"heigth": 2}}, "config train.heigth: unknown key; did you mean 'height'? (set in case.yaml)"),
    ({"train": {"height": 0}}, "config train.height: 0 is less than the minimum of 1"),
    ({"dataset": {"name": "n" * 300}}, "config dataset.name: value 'nnnn"),
    ({"dataset": {"name": ".."}}, "config dataset.name: value '..' is not allowed: Name used in every output path"),
    ({"datasets": {"..": {}}}, "config datasets: name '..' is not allowed: A dataset name"),
    ({"datasets": ["a", "b"]}, "config datasets: ['a', 'b'] is not of type 'object'"),
    ({"dataset": {"query_split": {"seed": -1}}}, "config dataset.query_split.seed: -1 is less than the minimum of 0"),
    ({"dataset": {"dev_seed": -3}}, "config dataset.dev_seed: -3 is less than the minimum of 0"),
    ({"train": {"seeds": [1, 2**64]}}, "config train.seeds[1]: 18446744073709551616 is greater than the maximum of 1073741824"),
    ({"train": {"seed": 2**31}}, "config train.seed: 2147483648 is greater than the maximum of 1073741824"),
    ({"evaluation": {"seed": 2**40}}, "config evaluation.seed: 1099511627776 is greater than the maximum"),
    ({"search": {"systems": []}}, "config search.systems: [] should be non-empty"),
    ({"train": {"select_metric": "dev_bogus"}}, "config train.select_metric: 'dev_bogus' is not one of ['auto', 'kmr_auc'"),
    ({"ablations": {"a": [{}]}}, "config ablations.a[0]: {} should be non-empty"),
], ids=lambda v: str(v)[:40])
def test_a_schema_violation_is_one_line_naming_the_key(override, names):
    assert names in error_of(override, {"case.yaml": override})


def test_every_seed_key_is_bounded_by_seed_max():
    from ehi.core.config import SEED_MAX

    def seed_maxima(node, path=""):  # every schema property named *seed*, under anyOf/oneOf too
        if isinstance(node, list):
            for item in node:
                yield from seed_maxima(item, path)
        elif isinstance(node, dict):
            for key, sub in (node.get("properties") or {}).items():
                if "seed" in key:
                    yield f"{path}{key}", sub.get("maximum", (sub.get("items") or {}).get("maximum"))
                yield from seed_maxima(sub, f"{path}{key}.")
            for key in ("anyOf", "oneOf", "items"):
                yield from seed_maxima(node.get(key), path)

    found = dict(seed_maxima(SCHEMA))
    assert found.pop("tuning.seeds") is None  # a count of seeds, not a seed
    assert len(found) == 6 and set(found.values()) == {SEED_MAX}, found


def test_validate_config_refuses_before_filling_and_fills_a_sound_config():
    calls = []
    config = copy.deepcopy(TEST_CONFIG)
    validate_config(config, SCHEMA_PATH, lambda c, s: calls.append(s))
    assert calls == [str(SCHEMA_PATH)]  # Snakemake's validate, which fills the defaults
    with pytest.raises(ConfigError, match=r"^config quick: 'maybe' is not one of"):
        validate_config({**config, "quick": "maybe"}, SCHEMA_PATH, lambda c, s: calls.append(s))
    assert len(calls) == 1


@pytest.mark.parametrize("metric", ["dev_ndcg@10", "dev_recall@100", "dev_tree_ndcg@10", "dev_tree_recall@100"])
def test_each_named_select_metric_is_a_column_the_dev_evaluation_logs(metric):
    import numpy as np

    from ehi.model.tree import TreeIndexer
    from ehi.train.dev_eval import dev_metrics

    enum = SCHEMA["properties"]["train"]["properties"]["select_metric"]["enum"]
    assert metric in enum and set(enum) - {"auto", "kmr_auc"} == {
        "dev_ndcg@10", "dev_recall@100", "dev_tree_ndcg@10", "dev_tree_recall@100"}
    rng = np.random.default_rng(0)
    docs, queries = rng.standard_normal((20, 8)).astype(np.float32), rng.standard_normal((3, 8)).astype(np.float32)
    tree = TreeIndexer(dim=8, height=1, branching=4)
    logged = dev_metrics(queries, docs, [np.array([0]), np.array([1]), np.array([2])], tree, np.arange(20) % 4)
    assert metric in logged


def _alias_bomb(levels: int, width: int) -> str:
    lines = ["a0: &a0 [lol, lol]"]
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]")
    return "\n".join(lines) + f"\ntrain: {{epochs: 1}}\nx: *a{levels}\n"


def test_an_alias_bomb_is_refused_at_once_naming_the_file(tmp_path):
    text = _alias_bomb(9, 9)  # 9^9 (387 million) values when walked, in some 500 bytes
    assert len(text) < 600
    assert "aliases expand past 100,000 values" in refused_file(tmp_path, text)
    assert "nest past 8 levels" in refused_file(tmp_path, _alias_bomb(10, 1))  # deep, not wide
    (tmp_path / "shared.yaml").write_text(_alias_bomb(2, 3))  # a few shared values: read as written
    assert read_config_file(tmp_path / "shared.yaml")["x"] == [[["lol", "lol"]] * 3] * 3
