"""Systems of an ablation variant reported beside the main setting's, under a name of their own.

The stabiliser (EHI's tree started from k-means) is trained as the ablation variant
``indexer_init~kmeans``; the question it answers (is the stabilised tree above IVF?) is a main-table
question, so its searches have to stand in the KMR table and in the significance tests next to
``ehi+tree`` and the baselines, not only in the ablation table. ``evaluation.variant_systems`` maps
a new system name to ``<variant>/<system>``::

    evaluation:
      variant_systems: {ehi-warm+tree: indexer_init~kmeans/ehi+tree}

The variant's cached per-query and summary rows are relabelled (``variant`` main, ``system`` the new
name); nothing is searched or trained twice.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ehi.core.errors import ConfigError


@dataclass(frozen=True)
class VariantSystem:
    name: str  # as reported, e.g. ehi-warm+tree
    variant: str  # e.g. indexer_init~kmeans
    system: str  # the variant's own name for it, e.g. ehi+tree

    @property
    def per_query(self) -> str:
        """Path of its per-query metrics under a dataset's results directory."""
        return f"{self.variant}/per_query/{self.system}.parquet"


def parse(mapping: dict[str, str] | None) -> list[VariantSystem]:
    """``{name: "<variant>/<system>"}`` (as resolved and passed to a rule) -> VariantSystems."""
    return [VariantSystem(name, *target.rsplit("/", 1)) for name, target in (mapping or {}).items()]


def resolve(mapping: dict[str, str] | None, variants, systems_of, main_systems) -> list[VariantSystem]:
    """The configured variant systems, checked against the variants the config defines.

    ``systems_of(variant)`` lists the systems a variant searches; a name that collides with a main
    system, an unknown variant or a system the variant does not search is a ConfigError naming the key.
    """
    out = []
    for name, target in (mapping or {}).items():
        where = f"config evaluation.variant_systems.{name}"
        variant, sep, system = target.rpartition("/")
        if not sep or not variant:
            raise ConfigError(f"{where}: {target!r} is not <variant>/<system>, e.g. indexer_init~kmeans/ehi+tree")
        if name in main_systems:
            raise ConfigError(f"{where}: {name!r} is already a system of the main setting (search.systems)")
        if variant == "main" or variant not in variants:
            known = [v for v in variants if v != "main"]
            raise ConfigError(f"{where}: variant {variant!r} is not an ablation variant of this config; "
                              f"known: {', '.join(known) or 'none (no ablations configured)'}")
        if system not in systems_of(variant):
            raise ConfigError(f"{where}: variant {variant!r} does not search {system!r}; "
                              f"it searches {', '.join(systems_of(variant))} (ablation_systems)")
        out.append(VariantSystem(name, variant, system))
    return out


def relabel(frame: pd.DataFrame, spec: VariantSystem) -> pd.DataFrame:
    """The variant's rows of ``spec.system`` as rows of the main setting's system ``spec.name``."""
    rows = frame[(frame.variant == spec.variant) & (frame.system == spec.system)]
    return rows.assign(variant="main", system=spec.name)


def with_variant_systems(main: pd.DataFrame, sources) -> pd.DataFrame:
    """``main`` (a summary or per-query table of the main setting) with each variant system's rows
    added; ``sources``: (VariantSystem, a table holding its variant's rows) pairs."""
    extra = [relabel(frame, spec) for spec, frame in sources]
    return pd.concat([main, *extra], ignore_index=True) if extra else main


def significance_role(spec: VariantSystem) -> str:
    """How :func:`ehi.evaluate.stats.significance_report` treats it, as the registry reads its
    search (:func:`ehi.evaluate.roles.role`): EHI's own search (the tree, plain or PQ) is asked the
    tree's question, an exhaustive search the exact one, anything else is a baseline of neither."""
    from ehi.evaluate.roles import role

    return role(spec.system)
