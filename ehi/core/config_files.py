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

An alias is a reference: PyYAML builds it once, but everything that walks the config (the
duplicate-key check, the schema, Snakemake's own passes) follows each path through it, so a few
hundred bytes of nested aliases (a "billion laughs" file) expand to billions of nodes and hang
``snakemake -n``. :func:`check_expansion` bounds the expanded size and the alias depth first.
"""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from ehi.core.errors import ConfigError


MAX_EXPANDED_NODES = 100_000  # a config expands to some hundreds of nodes; far past that is a bomb
MAX_ALIAS_DEPTH = 8  # aliases inside aliases inside ...: a config needs one or two


def _line(node) -> int:
    return node.start_mark.line + 1


def _children(node) -> list:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


def check_expansion(root, path) -> None:
    """Refuse a composed YAML document whose aliases expand past :data:`MAX_EXPANDED_NODES` nodes
    or nest past :data:`MAX_ALIAS_DEPTH`, naming the file. Each node is sized once (a shared node,
    which is what an alias is, by identity), so the check itself stays linear in the file."""
    size: dict[int, int] = {}
    depth: dict[int, int] = {}  # nesting of shared nodes below a node
    seen_once: set[int] = set()
    order, stack = [], [root]
    while stack:  # every node once, parents before children
        node = stack.pop()
        if id(node) in seen_once:
            continue
        seen_once.add(id(node))
        order.append(node)
        stack.extend(_children(node))
    referenced: dict[int, int] = {}
    for node in order:
        for child in _children(node):
            referenced[id(child)] = referenced.get(id(child), 0) + 1
    for node in reversed(order):  # children before parents
        kids = _children(node)
        size[id(node)] = 1 + sum(size[id(k)] for k in kids)
        depth[id(node)] = max([depth[id(k)] + (referenced[id(k)] > 1) for k in kids], default=0)
        if size[id(node)] > MAX_EXPANDED_NODES or depth[id(node)] > MAX_ALIAS_DEPTH:
            raise ConfigError(f"config file {path}, line {_line(node)}: its aliases expand past "
                              f"{MAX_EXPANDED_NODES:,} values or nest past {MAX_ALIAS_DEPTH} levels; write the "
                              "values out (a config needs far fewer)")


def _duplicates(node, path: tuple = (), walked: set | None = None):
    """(dotted key, first line, repeated line) of every key given twice in one mapping; a node
    reached again through an alias is not walked again (its keys were checked where it is written)."""
    walked = set() if walked is None else walked
    if id(node) in walked:
        return
    walked.add(id(node))
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            if key is not None and key != "<<":  # "<<" is a merge, not a key
                if key in seen:
                    yield ".".join((*path, key)), seen[key], _line(key_node)
                seen[key] = _line(key_node)
            yield from _duplicates(value_node, (*path, str(key)), walked)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            yield from _duplicates(item, (*path[:-1], f"{path[-1]}[{i}]") if path else (f"[{i}]",), walked)


def read_config_file(path: str | os.PathLike) -> dict:
    """The mapping in config file ``path``; a :class:`ConfigError` naming the file (and line) when it
    cannot be read, is not YAML, is empty or not a mapping, or gives a key twice."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"config file {path}: cannot be read ({getattr(err, 'strerror', None) or err})") from None
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        if root is not None:
            check_expansion(root, path)
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
