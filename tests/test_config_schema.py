"""The config schema and the typed config sections agree: same keys, same defaults, the same ranges
and choices field by field, and every schema key has a description (PyPSA-Eur's
test/test_config_schema.py, for this project)."""

import dataclasses
import re
import types
import typing
from pathlib import Path

import pytest
import yaml

from ehi.config import RESOLVED_BEFORE_SCHEMA, SECTIONS, TOP_LEVEL, WORKFLOW_ONLY, WORKFLOW_SET, sections_of
from ehi.core.config import REGISTRY, limits_of
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
    assert not set(SECTIONS) & set(TOP_LEVEL)
    for key, (default, why) in TOP_LEVEL.items():
        assert plain(SCHEMA["properties"][key]["default"]) == default, key
        assert why and "\n" not in why, key


# Section classes and the schema node each mirrors: the top-level sections and the nested ones
MIRRORS = {**{name: (cls, SCHEMA["properties"][name]) for name, cls in SECTIONS.items()},
           "dataset.synthetic": (SyntheticConfig, SCHEMA["properties"]["dataset"]["properties"]["synthetic"])}
WORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "enum")
JSON_TYPES = {int: "integer", float: "number", str: "string", bool: "boolean", list: "array", tuple: "array",
              dict: "object", type(None): "null"}


def arms(hint) -> list:
    """A type's members: a union's arms, else the type itself."""
    union = typing.get_origin(hint) in (typing.Union, types.UnionType)
    return list(typing.get_args(hint)) if union else [hint]


def stated(node: dict, hint) -> dict:
    """The range and choices the schema states on a field's value, where a field declares them: on
    its node and the ``anyOf`` arms of the field's own types (not null's, not another type's), and
    on the items of a list, whose items the field's limits hold for."""
    kinds = [a for a in arms(hint) if a is not type(None)]
    names = {JSON_TYPES[typing.get_origin(a) or a] for a in kinds}
    nodes = [node, *(arm for arm in node.get("anyOf", []) if arm.get("type", next(iter(names))) in names)]
    items = next((a for a in kinds if typing.get_origin(a) in (list, tuple)), None)
    if items is not None:
        return stated(next(n["items"] for n in nodes if "items" in n), typing.get_args(items)[0])
    found = [{w: n[w] for w in WORDS if w in n} for n in nodes]
    assert sum(bool(f) for f in found) <= 1, found  # one place states them, or merging would hide a clash
    return next((f for f in found if f), {})


@pytest.mark.parametrize("name", sorted(MIRRORS))
def test_schema_ranges_and_choices_are_the_fields(name):
    cls, node = MIRRORS[name]
    hints = typing.get_type_hints(cls)
    props, differ = node["properties"], []
    for f in dataclasses.fields(cls):
        if f.name in WORKFLOW_SET.get(name, ()):
            assert f.name not in props, f.name
            continue
        schema = stated(props[f.name], hints[f.name])
        if REGISTRY in f.metadata:  # names a plugin may add: the schema checks their form
            assert "enum" not in schema and "pattern" in props[f.name], f.name
            assert all(re.fullmatch(props[f.name]["pattern"], v) for v in f.metadata[REGISTRY]()), f.name
        if limits_of(f) != schema:
            differ.append(f"{name}.{f.name}: class {limits_of(f)}, schema {schema}")
    assert not differ, differ


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
