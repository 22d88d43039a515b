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
from typing import Any, TypeVar

S = TypeVar("S", bound="Section")


def canonical(value: Any) -> Any:
    """``value`` with every dict's keys sorted, recursively (lists keep their order: it can matter)."""
    if isinstance(value, dict):
        return {key: canonical(value[key]) for key in sorted(value)}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    return value


class Section:
    """Mixin of the section dataclasses: built from a config dict, where unknown keys fail loudly."""

    section = ""  # the config's name for it, for messages

    @classmethod
    def from_dict(cls: type[S], values: dict | None) -> S:
        values = dict(values or {})
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown {cls.section or cls.__name__} key(s) {unknown}; known: {sorted(known)}")
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
