"""The config's JSON schema built from the typed declarations of its keys.

A key's type, default, range and choices are its dataclass field's (:class:`ehi.core.config.Section`,
:func:`ehi.core.config.bounded`); what a type cannot say (the key's description, a name's pattern,
a list's length) is its :class:`Doc`. :func:`object_node` turns a class and the docs of its keys into
the schema of one block, :func:`value_node` one field's value; ``ehi.schema_file`` assembles the
whole schema and writes workflow/schemas/config.schema.yaml, so the file is never edited by hand.
Building raises ``ValueError`` where a declaration and its docs disagree (a field with no doc, a doc
with no field): a fault of the code, not of a config.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from typing import Any

from ehi.core.config import limits_of

JSON_TYPES = {int: "integer", float: "number", str: "string", bool: "boolean", list: "array", tuple: "array",
              dict: "object", type(None): "null"}


@dataclass(frozen=True)
class Doc:
    """What the schema says of a key beyond its field's type, default, range and choices.

    ``words``: JSON-schema words on the value (``pattern``, ``minItems``...), on its value arm where
    ``any_of``; ``items``: on a list's items; ``values`` and ``names``: on a map's values and on its
    keys (``additionalProperties`` and ``propertyNames``). ``any_of``: null and the value as
    ``anyOf`` arms rather than a list of types (a violation then reads as the description), ``arms``
    further arms as written. ``typed``: False where the choices alone say what the value is.
    ``nested``: the block whose keys are a mapping's keys."""

    text: str
    words: dict = field(default_factory=dict)
    items: dict = field(default_factory=dict)
    values: dict = field(default_factory=dict)
    names: dict = field(default_factory=dict)
    any_of: bool = False
    arms: tuple = ()
    typed: bool = True
    nested: Keys | None = None


@dataclass(frozen=True)
class Keys:
    """A block of the config: the classes whose fields are its keys, and each key's doc in the
    schema's order (the order an ablation row's variant path names train keys in). ``left_out``:
    fields of the classes that are no config key (the workflow sets them)."""

    classes: tuple[type, ...]
    docs: dict[str, str | Doc]
    text: str = ""
    left_out: frozenset = frozenset()


def _doc(doc: str | Doc) -> Doc:
    return doc if isinstance(doc, Doc) else Doc(doc)


def _arms(hint) -> list:
    union = typing.get_origin(hint) in (typing.Union, types.UnionType)
    return list(typing.get_args(hint)) if union else [hint]


def plain(value: Any) -> Any:
    """``value`` as YAML holds it: tuples as lists, recursively."""
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def _merged(base: dict, more: dict) -> dict:
    """``base`` with ``more``'s words, nested mappings merged word by word."""
    out = dict(base)
    for key, value in more.items():
        out[key] = _merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def value_node(hint, limits: dict, doc: Doc) -> dict:
    """The schema of one value of type ``hint``: a field's range and choices on the value itself, or
    on a list's innermost items (a field's limits hold for every item)."""
    arms = _arms(hint)
    if len(arms) > 1 and doc.any_of:
        own = [_one_value(a, limits, doc) for a in arms if a is not type(None)]
        return {"anyOf": [{"type": "null"}] * (type(None) in arms) + own + list(doc.arms)}
    if len(arms) > 1:
        node = {"type": [JSON_TYPES[typing.get_origin(a) or a] for a in arms]}
        listed = next((a for a in arms if (typing.get_origin(a) or a) in (list, tuple)), None)
        shaped = _one_value(listed, limits, doc) if listed is not None else _merged(limits, doc.words)
        return {**node, **{k: v for k, v in shaped.items() if k != "type"}}
    node = _one_value(hint, limits, doc)
    return {"anyOf": [node, *doc.arms]} if doc.arms else node


def _one_value(hint, limits: dict, doc: Doc) -> dict:
    origin, args = typing.get_origin(hint) or hint, typing.get_args(hint)
    if doc.nested is not None:
        return _merged(object_node(doc.nested), doc.words)
    node = {"type": JSON_TYPES[origin]} if doc.typed else {}
    if origin in (list, tuple):
        inner = value_node(args[0], limits, Doc("")) if args else {}
        node = {**node, **({"items": _merged(inner, doc.items)} if inner or doc.items else {})}
        if origin is tuple and args:
            node = {**node, "minItems": len(args), "maxItems": len(args)}
    elif origin is dict:
        value = value_node(args[1], {}, Doc("")) if args else {}
        if doc.names:
            node = {**node, "propertyNames": doc.names}
        if value or doc.values:
            node = {**node, "additionalProperties": _merged(doc.values, value)}
    else:
        node = {**node, **limits}
    return _merged(node, doc.words)


def field_node(spec: dataclasses.Field, hint, doc: str | Doc) -> dict:
    """One key's schema: its description, its value's schema and its default (none where the field
    has none: a key resolved before the schema fills defaults, or a required one)."""
    doc = _doc(doc)
    node = {"description": doc.text, **value_node(hint, limits_of(spec), doc)}
    if spec.default is not dataclasses.MISSING:
        return {**node, "default": plain(spec.default)}
    if spec.default_factory is not dataclasses.MISSING:
        return {**node, "default": plain(spec.default_factory())}
    return node


def object_node(keys: Keys, *, entry: bool = False) -> dict:
    """A block's schema, its keys in the docs' order; ``entry``: one entry of a map, whose keys
    without a default are required."""
    specs = {f.name: (f, typing.get_type_hints(cls)[f.name]) for cls in keys.classes for f in dataclasses.fields(cls)}
    undocumented = sorted(set(specs) - set(keys.docs) - keys.left_out)
    stray = sorted(set(keys.docs) - set(specs))
    if undocumented or stray:
        names = ", ".join(c.__name__ for c in keys.classes)
        raise ValueError(f"{names}: fields without a doc {undocumented}, docs without a field {stray}")
    properties = {name: field_node(*specs[name], doc) for name, doc in keys.docs.items()}
    required = [name for name, node in properties.items() if "default" not in node]
    head = {"type": "object", "additionalProperties": False}
    return {**head, **({"required": required} if entry and required else {}), "properties": properties}


def section_node(keys: Keys) -> dict:
    """A top-level block: every key optional, the block itself defaulting to ``{}``."""
    node = object_node(keys)
    properties = node.pop("properties")
    return {"description": keys.text, **node, "default": {}, "properties": properties}


def entries_node(text: str, entry: Keys, names: dict) -> dict:
    """A top-level map of named entries, each one ``entry``'s block."""
    return {"description": text, "type": "object", "default": {}, "propertyNames": names,
            "additionalProperties": object_node(entry, entry=True)}
