"""Typed config sections: one dataclass per section of the config, the one source of its defaults.

A stage owns the dataclass of a section its code reads (``ehi.train.config.TrainConfig``,
``ehi.search.config.SearchConfig``, ``ehi.evaluate.config.EvaluationConfig``); the sections only
the workflow reads are in ``ehi.config``, which maps every section to its class. A field's range
and choices are declared on it (:func:`bounded`) and checked by :class:`Section` on construction.
The JSON schema of the workflow is generated from the fields (:mod:`ehi.core.schema_build`,
``python -m ehi.schema_file``), so it states the same defaults, ranges and choices for Snakemake's
validation.

:func:`canonical` is what rule params carry: a config section with its keys sorted (Snakemake
compares params by ``repr``, in which a dict keeps its insertion order), so reordering keys in a
config file never reruns a job.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import types
import typing
from typing import Any, TypeVar

from ehi.core.errors import ConfigError

S = TypeVar("S", bound="Section")

# The largest seed (every seed key's maximum): a seed and the seeds derived from it (seed + level and
# node offsets) must fit the signed 32-bit integer FAISS's k-means takes, the narrowest of the
# libraries seeded (numpy, torch, FAISS, ScaNN).
SEED_MAX = 2**30
LIMITS = "limits"  # field metadata: its range and choices, in the JSON schema's words
REGISTRY = "registry"  # field metadata: a function naming the values a registry (plugins included) takes
BOUNDS = {"minimum": ("below its minimum", lambda v, b: v >= b), "maximum": ("above its maximum", lambda v, b: v <= b),
          "exclusiveMinimum": ("not above", lambda v, b: v > b), "exclusiveMaximum": ("not below", lambda v, b: v < b)}


def bounded(default: Any = dataclasses.MISSING, *, default_factory: Any = dataclasses.MISSING, minimum=None,
            maximum=None, exclusive_minimum=None, exclusive_maximum=None, choices=None, registry=None,
            metadata: dict | None = None) -> Any:
    """A section field with its range and choices, checked on construction (:class:`Section`); on a
    list field they hold for every item. ``choices``: a tuple, or a function returning one (read at
    check time, for a list that lives in a module too heavy to import here); the schema states the
    same ``enum``. ``registry``: a function naming what a registry takes, plugins included, so the
    schema states the names' form (a pattern) and the registry the names."""
    limits = {"minimum": minimum, "maximum": maximum, "exclusiveMinimum": exclusive_minimum,
              "exclusiveMaximum": exclusive_maximum, "enum": choices}
    extra = {LIMITS: {k: v for k, v in limits.items() if v is not None}, **({REGISTRY: registry} if registry else {})}
    return dataclasses.field(default=default, default_factory=default_factory, metadata={**(metadata or {}), **extra})


def limits_of(f: dataclasses.Field) -> dict:
    """A field's declared range and choices in the JSON schema's words, choices as a list."""
    limits = dict(f.metadata.get(LIMITS, {}))
    if "enum" in limits:
        choices = limits["enum"]
        limits["enum"] = list(choices() if callable(choices) else choices)
    return limits


def canonical(value: Any) -> Any:
    """``value`` with every dict's keys sorted, recursively (lists keep their order: it can matter)."""
    if isinstance(value, dict):
        return {key: canonical(value[key]) for key in sorted(value)}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    return value


class Section:
    """Mixin of the section dataclasses: built from a config dict, where an unknown key or a value
    of the wrong type is refused in one line naming the key; on construction, a value outside its
    field's declared range or choices (:func:`bounded`), and a broken rule between fields
    (:meth:`rules`), likewise."""

    section = ""  # the config's name for it, for messages

    def __post_init__(self):
        name = self.section or type(self).__name__
        for f in dataclasses.fields(self):
            fault = _fault(getattr(self, f.name), f)
            if fault:
                raise ConfigError(f"{name} key {f.name!r}: {fault}")
        broken = [rule for rule, holds in self.rules().items() if not holds]
        if broken:
            raise ConfigError(f"{name}: {'; '.join(broken)}")

    def rules(self) -> dict[str, bool]:
        """The section's rules between fields, {what it says: whether it holds}; a range or a choice
        of one field is declared on the field instead."""
        return {}

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


def _fault(value, spec: dataclasses.Field) -> str | None:
    """What is wrong with ``value`` against the field's declared range and choices (None: nothing);
    a list's items are checked each, null is never out of range (the type says whether it may be)."""
    if value is None or not (spec.metadata.get(LIMITS) or spec.metadata.get(REGISTRY)):
        return None
    if isinstance(value, (list, tuple)):
        faults = (_fault(item, spec) for item in value)
        return next((f"{fault} (an item of {list(value)!r})" for fault in faults if fault), None)
    limits = limits_of(spec)
    if REGISTRY in spec.metadata:
        limits["enum"] = sorted(spec.metadata[REGISTRY]())
    if "enum" in limits and value not in limits["enum"]:
        return f"{value!r} is not one of {limits['enum']}"
    bounds = [(limits[k], *BOUNDS[k]) for k in BOUNDS if k in limits]
    if bounds and (isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value)):
        return f"{value!r} is not a finite number"
    return next((f"{value!r} is {said} {bound!r}" for bound, said, holds in bounds if not holds(value, bound)), None)


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
