"""Typed config sections: one dataclass per section of the config, the one source of its defaults.

A stage owns the dataclass of a section its code reads (``ehi.train.config.TrainConfig``,
``ehi.search.config.SearchConfig``, ``ehi.evaluate.config.EvaluationConfig``); the sections only
the workflow reads are in ``ehi.config``, which maps every section to its class. The JSON schema of the workflow repeats the defaults for Snakemake's validation
and documents every key; ``tests/test_config_schema.py`` checks that the two agree.

:func:`canonical` is what rule params carry: a config section with its keys sorted (Snakemake
compares params by ``repr``, in which a dict keeps its insertion order), so reordering keys in a
config file never reruns a job.
"""

from __future__ import annotations

import dataclasses
import numbers
import types
import typing
from typing import Any, TypeVar

from ehi.core.errors import ConfigError

S = TypeVar("S", bound="Section")


def canonical(value: Any) -> Any:
    """``value`` with every dict's keys sorted, recursively (lists keep their order: it can matter)."""
    if isinstance(value, dict):
        return {key: canonical(value[key]) for key in sorted(value)}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    return value


class Section:
    """Mixin of the section dataclasses: built from a config dict, where an unknown key or a value
    of the wrong type is refused in one line naming the key (a section's own ranges are checked by
    its ``__post_init__``)."""

    section = ""  # the config's name for it, for messages

    @classmethod
    def from_dict(cls: type[S], values: dict | None) -> S:
        values = dict(values or {})
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        name = cls.section or cls.__name__
        if unknown:
            raise ConfigError(f"unknown {name} key(s) {unknown}; known: {sorted(known)}")
        hints = typing.get_type_hints(cls)
        for key, value in values.items():
            if not _is(value, hints[key]):
                raise ConfigError(f"{name} key {key!r}: {value!r} is not {_said(hints[key])}")
        return cls(**values)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def defaults(cls) -> dict:
        """Each field's default (default factories called), in declaration order."""
        out = {}
        for f in dataclasses.fields(cls):
            if f.default is not dataclasses.MISSING:
                out[f.name] = f.default
            elif f.default_factory is not dataclasses.MISSING:
                out[f.name] = f.default_factory()
        return out


def _is(value, hint) -> bool:
    """Whether ``value`` (read from YAML or a rule's params) is of the annotated type: an integer is a
    real, a bool is neither; lists and dicts are checked one level into their items."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_is(value, a) for a in args)
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint in (int, float):
        kind = numbers.Integral if hint is int else numbers.Real
        return isinstance(value, kind) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if (origin or hint) is list:
        return isinstance(value, (list, tuple)) and (not args or all(_is(v, args[0]) for v in value))
    if (origin or hint) is dict:
        return isinstance(value, dict)
    return True  # a type this check does not know (Any, a class): the section's own checks decide


def _said(hint) -> str:
    words = {int: "an integer", float: "a number", bool: "true or false", str: "a string", type(None): "null",
             list: "a list", dict: "a mapping"}
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return " or ".join(_said(a) for a in typing.get_args(hint))
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is list and args:
        return f"a list of {_said(args[0]).split(' ', 1)[-1]}s" if args[0] in (int, float, str) else "a list"
    return words.get(origin or hint, getattr(hint, "__name__", str(hint)))
