"""The config's JSON schema, with each violation one line naming the key.

Snakemake's ``validate(config, schema)`` fills the schema's defaults, but reports a violation as a
multi-line dump of the schema below the failing key (for an unknown top-level key, all of it).
:func:`validate_config` checks first, with jsonschema, and raises the best-matching violation as a
:class:`ConfigError` naming the dotted key and, where one of the config files sets it, that file;
only a config that passes is handed to Snakemake's ``validate`` to have its defaults filled.
Nothing here imports Snakemake: the Snakefile passes its ``validate`` in.
"""

from __future__ import annotations

import difflib
import functools
import os
from pathlib import Path
from typing import Callable

import yaml

from ehi.core.config_files import key_source
from ehi.core.errors import ConfigError

MAX_SHOWN = 60  # characters of a value quoted in a message


def _short(value) -> str:
    text = repr(value)
    if len(text) <= MAX_SHOWN:
        return text
    size = f"{len(value)} characters" if isinstance(value, str) else f"{type(value).__name__}"
    return f"{text[:MAX_SHOWN - 10]}... ({size})"


def _unknown_keys(err) -> list[str]:
    known = set(err.schema.get("properties", {}))
    return [k for k in err.instance if k not in known] if isinstance(err.instance, dict) else []


def _what(err, key: list[str]) -> tuple[list[str], str]:
    """(the key the violation is about, what is wrong with it, briefly)."""
    if err.validator == "additionalProperties" and err.validator_value is False:
        extra = _unknown_keys(err)
        if extra:
            known = list(err.schema.get("properties", {}))
            near = difflib.get_close_matches(str(extra[0]), known, n=1)
            hint = f"; did you mean {near[0]!r}?" if near else f"; known: {', '.join(known)}"
            return [*key, str(extra[0])], f"unknown key{hint}"
    if err.validator == "pattern":
        why = err.schema.get("description") or f"the pattern {err.validator_value}"
        what = "name" if "propertyNames" in err.relative_schema_path else "value"
        return key, f"{what} {_short(err.instance)} is not allowed: {why}"
    if err.validator in ("anyOf", "oneOf") and err.schema.get("description"):
        return key, f"{_short(err.instance)} is none of the accepted forms: {err.schema['description']}"
    if len(err.message) <= 2 * MAX_SHOWN + 40:
        return key, err.message
    return key, f"{_short(err.instance)} fails the schema's {err.validator!r} ({_short(err.validator_value)})"


def schema_error(config: dict, schema: dict, files: dict[str, dict] | None = None) -> str | None:
    """The one-line message of the config's best-matching schema violation, or None."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    err = best_match(Draft202012Validator(schema).iter_errors(config))
    if err is None:
        return None
    key, what = _what(err, list(err.absolute_path))
    source = key_source(files or {}, tuple(key))
    dotted = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in key).lstrip(".") or "(top level)"
    return f"config {dotted}: {' '.join(what.split())}" + (f" (set in {source})" if source else "")


def validate_config(config: dict, schema_path: str | os.PathLike, validate: Callable, files: dict[str, dict] | None = None) -> None:
    """Refuse the first schema violation in one line, then fill the defaults with ``validate``
    (``snakemake.utils.validate``). ``files``: the config files read (ehi.core.config_files)."""
    schema = yaml.safe_load(Path(schema_path).read_text())
    message = schema_error(config, schema, files)
    if message is not None:
        raise ConfigError(message)
    validate(config, str(schema_path))


@functools.lru_cache(maxsize=4)
def _train_properties(schema_path: str | os.PathLike) -> dict:
    return yaml.safe_load(Path(schema_path).read_text())["properties"]["train"]["properties"]


def variant_key_order(schema_path: str | os.PathLike) -> list[str]:
    """The train keys in the schema's order: the order in which a variant path names an ablation
    row's keys (:func:`variant_columns`)."""
    return list(_train_properties(schema_path))


def train_defaults(schema_path: str | os.PathLike) -> dict:
    """{train key: its schema default}: what a config that leaves a key out trains with."""
    return {key: spec.get("default") for key, spec in _train_properties(schema_path).items()}


def variant_columns(columns, key_order: list[str]) -> list[str]:
    """``columns`` (an ablation's row keys) in ``key_order``, a key the order lacks last: a row's
    variant path depends on its settings, not on the order they were written in, so reordering a
    row retrains nothing."""
    rank = {key: i for i, key in enumerate(key_order)}
    return sorted(columns, key=lambda key: rank.get(key, len(rank)))


def ablation_rows(ablations: dict, train: dict, key_order: list[str]) -> dict[str, list[dict[str, str]]]:
    """{ablation name: [row settings]}: each row of ``ablations`` as {key: its value's text}, keys in
    ``key_order`` (:func:`variant_columns`), a key some rows leave out taking ``train``'s value in
    them (so paths stay comparable), values written as Snakemake's ``Paramspace`` writes them: the
    parts of the row's variant path (:func:`ablation_variants`)."""
    import pandas as pd  # the config checks import this module; pandas only where variants are named

    settings = {}
    def whole(value) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    for name, rows in ablations.items():
        table = pd.DataFrame(rows)
        table = table.fillna({k: train[k] for k in table.columns}).infer_objects()
        # a missing value made a column of whole numbers float: its rows' own numbers were whole
        for key in table.columns:
            if whole(train[key]) and all(whole(row[key]) for row in rows if key in row):
                table[key] = table[key].astype(int)
        table = table[variant_columns(table.columns, key_order)]
        settings[name] = [{k: "NA" if pd.isna(v) else f"{v}" for k, v in zip(table.columns, row)}
                          for row in table.itertuples(index=False)]
    return settings


def variant_path(settings: dict[str, str]) -> str:
    """The variant path of a row's settings (:func:`ablation_rows`): ``key~value/...`` in their order."""
    return "/".join(f"{k}~{v}" for k, v in settings.items())


def ablation_variants(ablations: dict, train: dict, key_order: list[str]) -> dict[str, list[str]]:
    """{ablation name: [variant path]}: each row of ``ablations`` (:func:`ablation_rows`) as ``key~value/...``."""
    return {name: list(map(variant_path, rows)) for name, rows in ablation_rows(ablations, train, key_order).items()}
