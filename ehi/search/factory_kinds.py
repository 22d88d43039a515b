"""FAISS baselines by factory string: ``search.faiss_factories`` names a FAISS ``index_factory``
string per kind, and each becomes an ordinary registry entry (:class:`~ehi.search.registry.AnnKind`)
searched by :class:`ehi.search.faiss_factory.FactorySearcher`::

    search:
      faiss_factories: {opq-ivfpq: "OPQ16,IVF{nlist},PQ16x4fs,RFlat"}
      systems: [de+opq-ivfpq, ...]

Placeholders are the counts tuned on dev: ``{nlist}`` takes the values of ``search.ivf_nlist`` (the
same grid as ``faiss-ivf``, so ``lists_from_leaf_count`` applies), ``{M}`` those of
``search.hnsw_M``. A string with a refinement stage (``RFlat``, ``Refine(...)``) re-scores the best
``search.pq_rerank`` candidates. The search rule's params hold the kind's own string only, so a
change to one factory reruns its searches and no other.

The Snakefile registers the config's factories once it has checked the schema; the registration is
exported in ``$EHI_FAISS_FACTORIES`` (JSON), which every job inherits, so the rule scripts (search,
evaluation, tables) know the kinds without reading the config. Light to import: no faiss.
"""

from __future__ import annotations

import json
import os
import string

from ehi.core.errors import ConfigError

ENV = "EHI_FAISS_FACTORIES"
SECTION_KEY = "faiss_factories"  # the search.* key: {kind name: factory string}
PLACEHOLDERS = {"nlist": "ivf_nlist", "M": "hnsw_M"}  # {placeholder}: the search.* grid it takes
REFINE_MARKS = ("RFlat", "Refine(")  # factory components that re-rank
# A string is built once while the Snakefile is parsed, its placeholders filled with these values
# (17 lists: a count no other part of a string spells by chance, so the IVF of {nlist} is found)...
PROBE_VALUES = {"nlist": 17, "M": 32}
# ...over the data's width where known, else over these: MiniLM's, and 6720 = 2^6 * 3 * 5 * 7, which
# every PQ or OPQ count up to 8 and most beyond divide (a string refused here fails at every width)
PROBE_DIMS = (384, 6720)


def placeholders(factory: str) -> tuple[str, ...]:
    """The placeholder names in ``factory``; anything but :data:`PLACEHOLDERS` is a ConfigError."""
    try:
        names = tuple(dict.fromkeys(f for _, f, _, _ in string.Formatter().parse(factory) if f is not None))
    except ValueError as err:
        raise ConfigError(f"config search.{SECTION_KEY}: {factory!r}: {err}") from None
    bad = [n for n in names if n not in PLACEHOLDERS]
    if bad:
        raise ConfigError(f"config search.{SECTION_KEY}: {factory!r} has placeholder(s) {bad}; "
                          f"known: {['{' + p + '}' for p in PLACEHOLDERS]}")
    return names


def refines(factory: str) -> bool:
    return any(mark in factory for mark in REFINE_MARKS)


def _grid(factory: str):
    """The build candidates: every combination of the placeholders' configured values."""
    from ehi.search.grids import ivf_grid

    names = placeholders(factory)

    def grid(n_docs, s):
        combos = [{}]
        if "nlist" in names:
            combos = [{**c, **g} for c in combos for g in ivf_grid(n_docs, s)]
        if "M" in names:
            ms = (s.hnsw_M if s is not None else (16, 32))
            combos = [{**c, "M": int(m)} for c in combos for m in ms]
        if refines(factory):
            combos = [{**c, "rerank": int(s.pq_rerank if s is not None else 1000)} for c in combos]
        return combos

    return grid


def factory_kind(name: str, factory: str):
    """The registry entry of one factory string: tuned on dev when it has placeholders."""
    from ehi.search.registry import AnnKind

    names = placeholders(factory)
    keys = tuple(PLACEHOLDERS[n] for n in names) + (("pq_rerank",) if refines(factory) else ())
    return AnnKind(name, "ehi.search.faiss_factory:FactorySearcher", _grid(factory), keys,
                   build_defaults=(("factory", factory), ("kind", name)), tuned=bool(names or refines(factory)),
                   marker="P", in_paper=False, keyed_settings=(SECTION_KEY,))


def register_factories(factories: dict | None) -> None:
    """Register each ``{name: factory string}`` as a kind (again with the same string: nothing) and
    export the registration to the jobs; a name taken by another kind, or by another string, fails."""
    from ehi.search import registry

    factories = dict(factories or {})
    exported = {**json.loads(os.environ.get(ENV) or "{}"), **factories}
    for name, factory in factories.items():
        if not isinstance(factory, str) or not factory:
            raise ConfigError(f"config search.{SECTION_KEY}.{name}: a FAISS index_factory string, got {factory!r}")
        existing = registry._REGISTRY.get(name)
        if existing is not None:
            if dict(existing.build_defaults).get("factory") == factory:
                continue
            raise ConfigError(f"config search.{SECTION_KEY}.{name}: the name is already a search "
                              f"({existing.searcher}{', another factory' if 'factory' in dict(existing.build_defaults) else ''})")
        try:
            registry.register_kind(factory_kind(name, factory))
        except ValueError as err:
            raise ConfigError(f"config search.{SECTION_KEY}: {err}") from None
    if factories:
        os.environ[ENV] = json.dumps(exported, sort_keys=True)


_loaded = [""]  # the last exported value registered: read on every registry lookup, parsed once


def load_exported() -> None:
    """The factories a parent process (the Snakefile) exported, registered here."""
    value = os.environ.get(ENV, "")
    if value != _loaded[0]:
        register_factories(json.loads(value) if value else {})
        _loaded[0] = value


def probe_index(factory: str, dim: int | None = None):
    """(the empty index, the width it was built over) of ``factory`` with :data:`PROBE_VALUES`, over
    ``dim`` or else the first of :data:`PROBE_DIMS` it builds over; a ValueError saying why not."""
    import faiss

    from ehi.search.faiss_factory import faiss_reason

    spelled = factory.format(**{n: PROBE_VALUES[n] for n in placeholders(factory)})
    dims = (dim,) if dim else PROBE_DIMS
    for d in dims:
        try:
            return faiss.index_factory(int(d), spelled, faiss.METRIC_INNER_PRODUCT), d
        except RuntimeError as err:
            reason = faiss_reason(err)
    over = f"over the embeddings' {dim} dimensions" if dim else f"over any of {len(dims)} widths tried ({dims})"
    raise ValueError(f"FAISS cannot build {factory!r} by inner product {over}: {reason}")


def check_factories(factories: dict | None, dim: int | None) -> None:
    """Refuse, naming the key, a factory string FAISS cannot build (over the embeddings' width
    ``dim`` where known), one the pipeline cannot search or count
    (:func:`~ehi.search.faiss_factory.unsearchable`), and one whose ``{nlist}`` is not the list
    count of an IVF in it (``{nlist}`` is tuned over search.ivf_nlist, and the budget swept is the
    IVF's nprobe). Imports faiss: only for a config that has factories."""
    for name, factory in (factories or {}).items():
        key = f"config search.{SECTION_KEY}.{name}"
        try:
            index, _ = probe_index(factory, dim)
        except ValueError as err:
            raise ConfigError(f"{key}: {err}") from None
        from ehi.search.faiss_factory import unsearchable

        why = unsearchable(index)
        if why:
            raise ConfigError(f"{key}: {factory!r}: {why}")
        if "nlist" in placeholders(factory):
            import faiss

            ivf = faiss.try_extract_index_ivf(index)
            if ivf is None or ivf.nlist != PROBE_VALUES["nlist"]:
                raise ConfigError(f"{key}: {{nlist}} in {factory!r} is not an IVF's list count "
                                  "(write IVF{nlist}: the lists tuned over search.ivf_nlist, probed by nprobe)")
