"""The config schema and the typed config sections agree: same keys, same defaults, and every
schema key has a description (PyPSA-Eur's test/test_config_schema.py, for this project)."""

import dataclasses
import re
from pathlib import Path

import pytest
import yaml

from ehi.config import RESOLVED_BEFORE_SCHEMA, SECTIONS, TOP_LEVEL, WORKFLOW_ONLY, WORKFLOW_SET, sections_of
from ehi.data import sources
from ehi.data.synthetic import SyntheticConfig
from ehi.model.tree import PATH_LAYOUTS
from ehi.search.registry import KINDS, check_systems, system_pattern
from ehi.train.losses import names as loss_names

REPO = Path(__file__).resolve().parents[1]
SCHEMA = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())


def plain(value):
    """Tuples as lists (YAML has no tuples), recursively."""
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def dataclass_defaults(cls) -> dict:
    out = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            out[f.name] = plain(f.default)
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = plain(f.default_factory())
    return out


def walk(node, path=""):
    """(path, node) of every property in the schema, nested ones included."""
    for key, child in node.get("properties", {}).items():
        yield f"{path}{key}", child
        yield from walk(child, f"{path}{key}.")


def test_every_schema_key_has_a_description_and_a_default():
    resolved = {f"{section}.{key}" for section, keys in RESOLVED_BEFORE_SCHEMA.items() for key in keys}
    missing = [(p, what) for p, node in walk(SCHEMA) for what in ("description", "default")
               if what not in node and not (what == "default" and p in resolved)]
    assert not missing, missing


@pytest.mark.parametrize("section", sorted(SECTIONS))
def test_schema_defaults_are_the_dataclass_defaults(section):
    props = SCHEMA["properties"][section]["properties"]
    left = WORKFLOW_ONLY.get(section, set()) | RESOLVED_BEFORE_SCHEMA.get(section, set())
    schema_defaults = {k: plain(v["default"]) for k, v in props.items() if k not in left}
    fields = dataclass_defaults(SECTIONS[section])
    extra = WORKFLOW_SET.get(section, set())
    assert set(schema_defaults) == set(fields) - extra, set(schema_defaults) ^ (set(fields) - extra)
    assert {k: fields[k] for k in schema_defaults} == schema_defaults


def test_synthetic_subsection_defaults_are_the_generator_defaults():
    props = SCHEMA["properties"]["dataset"]["properties"]["synthetic"]["properties"]
    assert {k: plain(v["default"]) for k, v in props.items()} == dataclass_defaults(SyntheticConfig)


def test_top_level_keys_are_sections_or_known_top_level_values():
    assert set(SCHEMA["properties"]) == set(SECTIONS) | set(TOP_LEVEL)
    for key, default in TOP_LEVEL.items():
        assert plain(SCHEMA["properties"][key]["default"]) == default, key


def test_enums_are_the_registries_and_names_follow_their_form():
    train = SCHEMA["properties"]["train"]["properties"]
    assert train["path_layout"]["enum"] == list(PATH_LAYOUTS)
    # losses and sources are the registries' names (checked at parse time, plugins included): the
    # schema checks their form only, the registration functions' own pattern
    assert "enum" not in train["siamese_loss"] and train["siamese_loss"]["pattern"] == f"^{loss_names.NAME_PATTERN}$"
    source = SCHEMA["properties"]["dataset"]["properties"]["source"]
    assert "enum" not in source and "anyOf" not in source
    assert source["pattern"].startswith(f"^({sources.NAME_PATTERN}|{sources.IR_DATASETS_PREFIX}")
    for name in loss_names.BUILTIN_SIAMESE_LOSSES:
        assert re.fullmatch(train["siamese_loss"]["pattern"], name), name
    for name in (*sources.source_names(), "ir_datasets:beir/scifact"):
        assert re.fullmatch(source["pattern"], name), name
    for bad in ("SciFact", "ir_datasets:", "a b"):
        assert not re.fullmatch(source["pattern"], bad), bad


def test_system_names_are_checked_against_the_ann_registry():
    item = SCHEMA["properties"]["search"]["properties"]["systems"]["items"]["pattern"]
    for kind in (*KINDS, "tree"):
        assert re.fullmatch(system_pattern(), f"de+{kind}") and re.search(item, f"de+{kind}")
        assert kind in SCHEMA["properties"]["search"]["properties"]["systems"]["description"]
    check_systems(SCHEMA["properties"]["search"]["properties"]["systems"]["default"])
    with pytest.raises(ValueError, match=r"search.systems.*de\+faiss-ivff"):
        check_systems(["de+exact", "de+faiss-ivff"])


def test_the_embedded_default_config_builds_every_section():
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    sections = sections_of(config)
    assert sections["search"].k == config["search"]["k"]
    assert sections["search"].systems == SCHEMA["properties"]["search"]["properties"]["systems"]["default"]
    train = {k: v for k, v in config["train"].items() if k not in WORKFLOW_ONLY["train"]}  # seeds: the workflow's
    assert sections["train"].to_dict() == {**dataclass_defaults(SECTIONS["train"]), **train}
    with pytest.raises(ValueError, match="unknown search key.*hnsw_m"):
        SECTIONS["search"].from_dict({"hnsw_m": [8]})
