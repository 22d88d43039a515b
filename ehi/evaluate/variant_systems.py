"""Systems of an ablation variant reported beside the main setting's, under a name of their own.

The stabiliser (EHI's tree started from k-means) is trained as the ablation row ``stabiliser``
(variant ``indexer_init~kmeans``); the question it answers (is the stabilised tree above IVF?) is a
main-table question, so its searches have to stand in the KMR table and in the significance tests
next to ``ehi+tree`` and the baselines, not only in the ablation table. ``evaluation.variant_systems``
maps a new system name to ``<ablation row>/<system>``::

    ablations:
      stabiliser: [{indexer_init: kmeans}]
      from_de: [{encoder_init: de}, {encoder_init: de, indexer_init: ivf}]
    evaluation:
      variant_systems: {ehi-warm+tree: stabiliser/ehi+tree, ehi-de-ivf+tree: from_de[1]/ehi+tree}

A row is named by its table where the table has one row (``stabiliser``), else by the table and the
row's 0-based index (``from_de[1]``): the row's settings, hence its variant path, stay written once,
in ``ablations``. The names are resolved to variant paths here, once; everything downstream (rule
params, the report) reads ``<variant path>/<system>``. The variant's cached per-query and summary
rows are relabelled (``variant`` main, ``system`` the new name); nothing is searched or trained twice.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ehi.core.catalog import Setting
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

    @property
    def path(self) -> str:
        """``<variant path>/<system>``: what :func:`parse` reads back."""
        return f"{self.variant}/{self.system}"


def parse(mapping: dict[str, str] | None) -> list[VariantSystem]:
    """``{name: "<variant>/<system>"}`` (as resolved and passed to a rule) -> VariantSystems."""
    return [VariantSystem(name, *target.rsplit("/", 1)) for name, target in (mapping or {}).items()]


def row_names(ablations: dict[str, list[str]]) -> dict[str, str]:
    """{row name: variant path} of every ablation row (``ablations``: {table: [variant path]}): a
    table of one row is named by the table (``floor``), a row of a longer table by the table and the
    row's 0-based index (``from_de[1]``)."""
    return {(table if len(paths) == 1 else f"{table}[{i}]"): path
            for table, paths in ablations.items() for i, path in enumerate(paths)}


def named_rows(mapping: dict[str, str] | None, ablations: dict[str, list[str]]) -> list[VariantSystem]:
    """``{name: "<ablation row>/<system>"}`` -> VariantSystems of the rows' variant paths; a target
    that is not of that form, or names no row of ``ablations``, is a ConfigError naming the key."""
    rows = row_names(ablations)
    out = []
    for name, target in (mapping or {}).items():
        where = f"config evaluation.variant_systems.{name}"
        row, sep, system = target.rpartition("/")
        if not sep or not row:
            raise ConfigError(f"{where}: {target!r} is not <ablation row>/<system>, e.g. floor/ehi+tree")
        if row not in rows:
            raise ConfigError(f"{where}: {row!r} names no ablation row (a table of one row by its name, else "
                              f"<table>[i]); known: {', '.join(rows) or 'none (no ablations configured)'}")
        out.append(VariantSystem(name, rows[row], system))
    return out


def resolve(mapping: dict[str, str] | None, ablations: dict[str, list[str]], systems_of,
            main_systems) -> list[VariantSystem]:
    """The configured variant systems (:func:`named_rows`), checked against the config's systems.

    ``systems_of(variant)`` lists the systems a variant searches; a name that collides with a main
    system or a system the row does not search is a ConfigError naming the key.
    """
    specs = named_rows(mapping, ablations)
    for spec, target in zip(specs, (mapping or {}).values()):
        where = f"config evaluation.variant_systems.{spec.name}"
        if spec.name in main_systems:
            raise ConfigError(f"{where}: {spec.name!r} is already a system of the main setting (search.systems)")
        if spec.system not in systems_of(spec.variant):
            raise ConfigError(f"{where}: {target.rpartition('/')[0]} ({spec.variant}) does not search {spec.system!r}; "
                              f"it searches {', '.join(systems_of(spec.variant))} (ablation_systems)")
    return specs


def config_ablations(config: dict, schema_path) -> dict[str, list[str]]:
    """A dataset's ablations as ``{table: [variant path]}``, read from its config as written (or as
    ``datasets:`` lays it out): what the sections over several datasets read of a dataset whose own
    checks run in its own instance. The rows' paths are the Snakefile's: the schema's defaults and
    the grid's first values fill a key some rows leave out."""
    from ehi.core.config_schema import ablation_variants, train_defaults, variant_key_order
    from ehi.train.grid import take_grid

    train = {**train_defaults(schema_path), **(config.get("train") or {})}
    take_grid(train)
    return ablation_variants(config.get("ablations") or {}, train, variant_key_order(schema_path))


def config_variant_paths(config: dict, schema_path) -> dict[str, str]:
    """A dataset's ``evaluation.variant_systems`` as ``{name: "<variant path>/<system>"}``
    (:func:`config_ablations`): what the cross-dataset reports read of one dataset."""
    specs = named_rows((config.get("evaluation") or {}).get("variant_systems"), config_ablations(config, schema_path))
    return {spec.name: spec.path for spec in specs}


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


# the settings a config declares, each with its variant path: the workflow builds its table of them
# once (workflow/rules/settings.smk) and looks each job's variant wildcard up there
# (ehi.core.catalog.variant_setting); a command-line tool reads the same table from a config's files
def declared_settings(rows: dict[str, list[dict[str, str]]], key_order: list[str], grid: dict[str, list] | None = None,
                      seed_replicas: dict[str, dict[str, int]] | None = None) -> dict[str, Setting]:
    """{variant path: its Setting} of every setting a config declares: main, each ablation row
    (``rows``, :func:`ehi.core.config_schema.ablation_rows`), each point of the part of the train
    ``grid`` ({key: values}, :func:`ehi.train.grid.take_grid`) each model reads in main or a row,
    and each seed replica (``seed_replicas``: {variant: {path: seed}}, ehi.evaluate.seeds.replicas)."""
    from ehi.core.config_schema import variant_path
    from ehi.train.grid import grid_settings, model_grid

    settings = {"main": Setting({}, "main"),
                **{variant_path(row): Setting(row, variant_path(row)) for table in rows.values() for row in table}}
    for variant, setting in list(settings.items()):
        for model in ("de", "ehi"):
            points = model_grid(grid or {}, model, setting.values())
            if points:  # a grid point: a setting of its own, trained with train.seed (ehi/train/grid.py)
                settings.update({path: Setting(keys, path) for path, keys in
                                 grid_settings(setting.keys, points, key_order).items()})
    settings.update({path: Setting({**settings[variant].keys, "seed": f"{seed}"}, variant, seed)
                     for variant, paths in (seed_replicas or {}).items() for path, seed in paths.items()
                     if path != variant})
    return settings


def config_settings(config: dict, schema_path) -> dict[str, Setting]:
    """:func:`declared_settings` of a config as read from its files (``train`` and ``ablations`` as
    written, the schema's defaults filling what it leaves out): what a command-line tool reads of
    the settings a config's runs are, as the workflow names them (workflow/rules/settings.smk)."""
    from ehi.core.config_schema import ablation_rows, train_defaults, variant_key_order
    from ehi.evaluate.seeds import setting_replicas
    from ehi.train.grid import take_grid

    key_order = variant_key_order(schema_path)
    train = {**train_defaults(schema_path), **(config.get("train") or {})}
    grid = take_grid(train)
    systems = named_rows((config.get("evaluation") or {}).get("variant_systems"), config_ablations(config, schema_path))
    seed_replicas = setting_replicas(systems, train.get("seeds") or [train["seed"]], train["seed"])
    return declared_settings(ablation_rows(config.get("ablations") or {}, train, key_order), key_order, grid,
                             seed_replicas)
