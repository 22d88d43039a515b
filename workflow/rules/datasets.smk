# Helpers of the several-datasets branch (../multi.smk): each dataset's config, and the files of
# one target of every dataset.
import copy
import re

from ehi.core.errors import ConfigError
from ehi.evaluate.variant_systems import config_variant_paths


def merged(base, override):
    """``base`` with ``override`` laid over it, key by key inside nested blocks."""
    out = copy.deepcopy(base)
    for key, value in override.items():
        nested = isinstance(value, dict) and isinstance(out.get(key), dict)
        out[key] = merged(out[key], value) if nested else copy.deepcopy(value)
    return out


def dataset_configs(config):
    """{dataset name: its complete config}: the shared keys with the entry's overrides laid over."""
    shared = {k: v for k, v in config.items() if k != "datasets"}
    out = {}
    for name, override in config["datasets"].items():
        given = override.get("dataset", {}).get("name", name)
        if given != name:
            raise ConfigError(f"config datasets.{name}.dataset.name is {given!r}; leave it out or make it {name!r}")
        out[name] = merged(shared, merged(override, {"dataset": {"name": name}}))
    return out


def rule_prefixes(names):
    """{dataset: prefix of its rule names}; rule names are identifiers, so other characters become _."""
    prefixes = {name: re.sub(r"\W", "_", name) + "__" for name in names}
    if len(set(prefixes.values())) < len(prefixes):
        raise ConfigError(f"config datasets: names {sorted(names)} clash once made rule names {sorted(prefixes.values())}")
    return prefixes


def of_each(target, what="input"):
    """The input (or output) files of one target rule of every dataset."""
    return [f for name in DATASETS for f in getattr(getattr(rules, PREFIX[name] + target), what)]


def report_input(path, report_only):
    """As common.smk's cached(): the cache as it is for a report-only call, else the pipeline's output."""
    return os.path.abspath(path) if report_only else path


def across_seeding(name, datasets):
    """What the cross-dataset table needs of one dataset's seeds: {variant: its seed replicas} of the
    main setting and each variant system's variant (none for one seed), the variant systems, the
    main seed (as the dataset's own tables rule: ehi.evaluate.seeds)."""
    from ehi.evaluate.seeds import setting_replicas
    from ehi.evaluate.variant_systems import parse as parse_variant_systems

    cfg = datasets[name]
    main_seed = cfg["train"].get("seed", 0)
    seeds = cfg["train"].get("seeds") or [main_seed]
    systems = config_variant_paths(cfg, SCHEMA)
    return {"seed_replicas": setting_replicas(parse_variant_systems(systems), seeds, main_seed) if len(seeds) > 1 else {},
            "variant_systems": systems, "main_seed": main_seed}


# The gain tables' helpers (gain.smk).
from ehi.core.config_files import read_config_file


def gain_datasets(gain, datasets):
    """{name: (its config, whether this config runs it)} of the gain table's datasets, in its order:
    gain.datasets (default every dataset of this config), then gain.other_datasets, each read from
    the config file that runs it."""
    names = gain.get("datasets") or list(datasets)
    unknown = [n for n in names if n not in datasets]
    if unknown:
        raise ConfigError(f"config gain.datasets: {unknown} are not datasets of this config ({sorted(datasets)})")
    out = {n: (datasets[n], True) for n in names}
    for name, path in (gain.get("other_datasets") or {}).items():
        other = read_config_file(path)
        runs = dataset_configs(other) if other.get("datasets") else {other.get("dataset", {}).get("name"): other}
        if name not in runs:
            raise ConfigError(f"config gain.other_datasets.{name}: {path} runs no dataset {name!r} ({sorted(runs)})")
        out[name] = (runs[name], False)
    return out


def gain_input(name, path):
    """A dataset's file the gain reads: this config's rule output, or the committed file of another config's."""
    ours = GAIN_DATASETS[name][1]
    return report_input(f"results/{name}/{path}", REPORT_ONLY or not ours)


def gain_leaf_counts():
    """dev_leaf_count.json of the datasets whose leaf count was chosen on dev."""
    return [gain_input(n, "dev_leaf_count.json") for n, (cfg, _) in GAIN_DATASETS.items()
            if cfg.get("train", {}).get("branching") == "auto"]
