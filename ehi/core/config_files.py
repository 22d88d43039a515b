"""Config files read strictly: each refusal one line naming the file and line.

Snakemake reads a config file with PyYAML, which keeps the last of two equal keys without a word
(a duplicated ``train:`` block silently drops the first), and its own messages for a file that is
not YAML, or is a list or empty, name neither the file nor the line. The Snakefile reads every
config file again here before validating, so a duplicated key is refused, and the key a schema
error is about can be traced to the file that set it (:func:`key_source`).

Snakemake loads the files given with ``--configfile`` before the Snakefile runs, so a syntax
error, a list or an empty file among those stops it first, with Snakemake's own one-line message
(no file, no line); :func:`read_config_file` names both for every file it is given, the
Snakefile's default config file included.
"""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from ehi.core.errors import ConfigError


def _line(node) -> int:
    return node.start_mark.line + 1


def _duplicates(node, path: tuple = ()):
    """(dotted key, first line, repeated line) of every key given twice in one mapping."""
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            if key is not None and key != "<<":  # "<<" is a merge, not a key
                if key in seen:
                    yield ".".join((*path, key)), seen[key], _line(key_node)
                seen[key] = _line(key_node)
            yield from _duplicates(value_node, (*path, str(key)))
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            yield from _duplicates(item, (*path[:-1], f"{path[-1]}[{i}]") if path else (f"[{i}]",))


def read_config_file(path: str | os.PathLike) -> dict:
    """The mapping in config file ``path``; a :class:`ConfigError` naming the file (and line) when it
    cannot be read, is not YAML, is empty or not a mapping, or gives a key twice."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"config file {path}: cannot be read ({getattr(err, 'strerror', None) or err})") from None
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(f"config file {path}{where}: not valid YAML ({err.problem or err.context})") from None
    except yaml.YAMLError as err:
        raise ConfigError(f"config file {path}: not valid YAML ({' '.join(str(err).split())})") from None
    if data is None:
        raise ConfigError(f"config file {path}: empty; a config file is a mapping of keys, e.g. 'train: {{epochs: 3}}'")
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path}, line {_line(root)}: a {type(data).__name__}, not a mapping of keys "
                          "at top level (e.g. 'train: {epochs: 3}')")
    for key, first, again in _duplicates(root):
        raise ConfigError(f"config file {path}, line {again}: key {key!r} is given twice (first on line {first}); "
                          "YAML would keep the last silently: give it once")
    return data


def read_config_files(paths) -> dict[str, dict]:
    """{path: its mapping} of every config file, in the order given (the last one wins a key)."""
    return {str(p): read_config_file(p) for p in paths}


def key_source(files: dict[str, dict], key: tuple) -> str | None:
    """The last file of ``files`` (:func:`read_config_files`) that sets ``key`` (a path of keys),
    or None (set on the command line, or a default)."""
    for path in reversed(list(files)):
        node = files[path]
        for part in key:
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
                node = node[part]
            else:
                break
        else:
            return path
    return None
