"""The config schema is generated from the typed config sections (``python -m ehi.schema_file``): the
committed file is current, and it states the sections' keys, defaults, ranges and choices field by
field, with a description for every key (PyPSA-Eur's test/test_config_schema.py, for this project)."""

import dataclasses
import re
import types
import typing
from pathlib import Path

import pytest
import yaml

from ehi import schema_file
from ehi.config import (ENTRIES, RESOLVED_BEFORE_SCHEMA, SECTIONS, TOP_LEVEL, WORKFLOW_ONLY, WORKFLOW_SET,
                        QuerySplitConfig, sections_of)
from ehi.core.config import REGISTRY, Section, limits_of
from ehi.core.schema_build import Doc, Keys, object_node, value_node
from ehi.data import sources
from ehi.data.synthetic import SyntheticConfig
from ehi.model.tree import PATH_LAYOUTS
from ehi.search.registry import KINDS, check_systems, system_pattern
from ehi.train.losses import names as loss_names

REPO = Path(__file__).resolve().parents[1]
SCHEMA_FILE = REPO / "workflow" / "schemas" / "config.schema.yaml"
SCHEMA = yaml.safe_load(SCHEMA_FILE.read_text())


def test_the_schema_file_is_the_generated_schema():
    # a declaration changed without `python -m ehi.schema_file` leaves the file stale: Snakemake
    # would validate against, and fill defaults from, what the classes no longer say
    assert SCHEMA_FILE.read_text() == schema_file.schema_text(), "run: python -m ehi.schema_file"
    assert SCHEMA == schema_file.schema()
    assert schema_file.main(["--check", "--path", str(SCHEMA_FILE)]) == 0


def test_the_check_refuses_a_stale_file(tmp_path, capsys):
    stale = tmp_path / "config.schema.yaml"
    stale.write_text(SCHEMA_FILE.read_text().replace("default: 128", "default: 64", 1))
    assert schema_file.main(["--check", "--path", str(stale)]) == 1
    assert "not current" in capsys.readouterr().err
    assert schema_file.main(["--path", str(stale)]) == 0 and stale.read_text() == SCHEMA_FILE.read_text()


def test_a_field_without_a_doc_or_a_doc_without_a_field_stops_the_build():
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Two(Section):
        first: int = 1
        second: int = 2

    with pytest.raises(ValueError, match=r"fields without a doc \['second'\], docs without a field \[\]"):
        object_node(Keys((Two,), {"first": "The first."}))
    with pytest.raises(ValueError, match=r"docs without a field \['third'\]"):
        object_node(Keys((Two,), {"first": "The first.", "second": "The second.", "third": "None."}))


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


def test_a_value_takes_its_schema_from_its_type_and_its_limits():
    # null beside a value: a list of types, or (any_of) arms whose violation reads as the description
    assert value_node(int | None, {"minimum": 1}, Doc("")) == {"type": ["integer", "null"], "minimum": 1}
    assert value_node(int | None, {"minimum": 1}, Doc("", any_of=True)) == {
        "anyOf": [{"type": "null"}, {"type": "integer", "minimum": 1}]}
    # a list's limits hold for its items; a tuple's length is its type's
    assert value_node(list[int] | None, {"minimum": 2}, Doc("")) == {
        "type": ["array", "null"], "items": {"type": "integer", "minimum": 2}}
    assert value_node(tuple[float, float], {"minimum": 0}, Doc("")) == {
        "type": "array", "items": {"type": "number", "minimum": 0}, "minItems": 2, "maxItems": 2}
    assert value_node(dict[str, str], {}, Doc("", values={"minLength": 1})) == {
        "type": "object", "additionalProperties": {"minLength": 1, "type": "string"}}


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


def test_every_top_level_key_has_a_class():
    values = dataclass_defaults(TOP_LEVEL)
    assert set(SCHEMA["properties"]) == set(SECTIONS) | set(ENTRIES) | set(values)
    assert len(SECTIONS) + len(ENTRIES) + len(values) == len(SCHEMA["properties"])  # each key in one place
    for key, default in values.items():
        assert plain(SCHEMA["properties"][key]["default"]) == default, key
    for key, cls in ENTRIES.items():
        entry = SCHEMA["properties"][key]["additionalProperties"]
        assert entry["required"] == [f.name for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING
                                     and f.default_factory is dataclasses.MISSING], key


# Section classes and the schema node each mirrors: the top-level sections and the nested ones
MIRRORS = {**{name: (cls, SCHEMA["properties"][name]) for name, cls in SECTIONS.items()},
           **{name: (cls, SCHEMA["properties"][name]["additionalProperties"]) for name, cls in ENTRIES.items()},
           "(top level)": (TOP_LEVEL, SCHEMA),
           "dataset.synthetic": (SyntheticConfig, SCHEMA["properties"]["dataset"]["properties"]["synthetic"]),
           "dataset.query_split": (QuerySplitConfig, SCHEMA["properties"]["dataset"]["properties"]["query_split"]["anyOf"][1])}
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
