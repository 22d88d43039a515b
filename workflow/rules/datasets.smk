# Helpers of the several-datasets branch (../multi.smk): the files of one target of every dataset;
# each dataset's config and the checks of the sections over datasets are ehi.core.multi_config's.
from ehi.core.catalog import dataset_results
from ehi.core.multi_config import calibration_target, check_trained_benchmark, dataset_configs, gain_datasets, rule_prefixes
from ehi.evaluate.variant_systems import config_variant_paths
from ehi.report.gain_inputs import committed_per_query


def of_each(target, what="input"):
    """The input (or output) files of one target rule of every dataset."""
    return [f for name in DATASETS for f in getattr(getattr(rules, PREFIX[name] + target), what)]


def report_input(path, report_only):
    """As common.smk's cached(): the cache as it is for a report-only call, else the pipeline's output."""
    return os.path.abspath(path) if report_only else path


def across_seeding(name, datasets):
    """What the cross-dataset table and the gain need of one dataset's seeds: {variant: {its seed replicas:
    their seeds}} of the main setting and each variant system's variant (none for one seed), and the
    variant systems (as the dataset's own tables rule: ehi.evaluate.seeds)."""
    from ehi.evaluate.seeds import setting_replicas
    from ehi.evaluate.variant_systems import parse as parse_variant_systems

    train = datasets[name].get("train", {})  # another config's (gain.other_datasets) may leave it out
    main_seed = train.get("seed", 0)
    seeds = train.get("seeds") or [main_seed]
    systems = config_variant_paths(datasets[name], SCHEMA)
    return {"seed_replicas": setting_replicas(parse_variant_systems(systems), seeds, main_seed) if len(seeds) > 1 else {},
            "variant_systems": systems}


# The gain tables' helpers (gain.smk).


def gain_input(name, path):
    """A dataset's file the gain reads: this config's rule output, or the committed file of another config's."""
    ours = GAIN_DATASETS[name][1]
    return report_input(f"{dataset_results(name)}/{path}", REPORT_ONLY or not ours)


def gain_per_query(name):
    """The per-query tables the gain reads of one dataset (ehi/report/gain_inputs.py): this config's
    as its rule significance reads them, another config's (or a report-only run's) as committed."""
    if GAIN_DATASETS[name][1] and not REPORT_ONLY:
        tests = getattr(rules, PREFIX[name] + "significance").input
        return [*tests.per_query, *tests.variant_per_query]
    seeding = across_seeding(name, {n: cfg for n, (cfg, _) in GAIN_DATASETS.items()})
    return [os.path.abspath(p) for p in committed_per_query(dataset_results(name), seeding["variant_systems"],
                                                            seeding["seed_replicas"])]


def gain_leaf_counts():
    """dev_leaf_count.json of the datasets whose leaf count was chosen on dev."""
    return [gain_input(n, "dev_leaf_count.json") for n, (cfg, _) in GAIN_DATASETS.items()
            if cfg.get("train", {}).get("branching") == "auto"]
