# The tree's gain over k-means IVF at equal work across a config's datasets (`gain:`; ehi/report/gain.py,
# gain_scaling.py): report rules over the datasets' per-query results and their data facts
# (results/<dataset>/data.json: N, training queries, a world's knobs), never typed sizes. Datasets of
# other configs (`gain.other_datasets`, e.g. the frozen real collections) join with their results as
# committed. Included by ../multi.smk; its helpers are in datasets.smk.
from ehi.core.catalog import dataset_properties, trained_matched
from ehi.core.multi_config import check_gain_pairs


GAIN = config.get("gain") or {}
GAIN_TABLE = f"results/tables/{GAIN.get('name')}"
GAIN_FIGURE = f"results/figures/{GAIN.get('name')}"
with exit_on_user_error("snakemake"):
    # {name: (its config, whether this config runs it)} in the table's order
    GAIN_DATASETS = gain_datasets(GAIN, DATASETS)
    # what the gain table reads of each: its leaf count, its main seed, its variant systems' paths and,
    # trained with several seeds, its seed replicas (a key only then: one seed's params stay as they were)
    _GAIN_SEEDING = {n: across_seeding(n, {m: cfg for m, (cfg, _) in GAIN_DATASETS.items()}) for n in GAIN_DATASETS}
    GAIN_SETTINGS = {n: {"branching": cfg.get("train", {}).get("branching"), "main_seed": cfg.get("train", {}).get("seed", 0),
                         "variant_systems": config_variant_paths(cfg, SCHEMA),
                         **({"seed_replicas": _GAIN_SEEDING[n]["seed_replicas"]} if _GAIN_SEEDING[n]["seed_replicas"] else {})}
                     for n, (cfg, _) in GAIN_DATASETS.items()}
# the datasets measured before training (rule collection_properties, asked for by name: it needs the
# dataset's pretrained vectors) and those with a committed trained benchmark (rule trained_benchmark)
GAIN_MEASURED = [n for n in GAIN_DATASETS if os.path.exists(dataset_properties(n))]
GAIN_BENCHMARKED = [n for n in GAIN_DATASETS if os.path.exists(trained_matched(n))]
# which systems are compared: the config's, never a name the report knows
GAIN_SYSTEMS = {"trees": list(GAIN.get("trees") or []), "controls": list(GAIN.get("controls") or []),
                "dataset_pairs": dict(GAIN.get("dataset_pairs") or {})}
with exit_on_user_error("snakemake"):
    check_gain_pairs(GAIN_SYSTEMS["dataset_pairs"], GAIN_DATASETS)


if GAIN_DATASETS:

    rule gain_table:
        """The tree's gain over IVF at each budget of work, every dataset of `gain:`, and every system's
        values at those budgets (_systems), with the gain figure."""
        input:
            facts=[gain_input(n, "data.json") for n in GAIN_DATASETS],
            # the main setting's and the variant systems' of every seed, each dataset's under its folder
            per_query=[p for n in GAIN_DATASETS for p in gain_per_query(n)],
            leaf_counts=gain_leaf_counts(),
        output:
            # committed: update() outputs, kept through a failed job (ehi/core/unfinished.py)
            md=update(f"{GAIN_TABLE}.md"),
            tex=update(f"{GAIN_TABLE}.tex"),
            csv=update(f"{GAIN_TABLE}.csv"),
            systems=[update(f"{GAIN_TABLE}_systems{ext}") for ext in (".md", ".tex", ".csv")],
            figure=update(f"{GAIN_FIGURE}.png"),
        params:
            datasets=GAIN_SETTINGS,
            systems=GAIN_SYSTEMS,
            version=1,
        log:
            f"logs/{GAIN.get('name')}.log",
        conda:
            "../envs/ehi.yaml"
        script:
            "../scripts/gain_table.py"

    rule gain_scaling:
        """The floor tree's gain over IVF with as many lists against N and training queries a leaf."""
        input:
            rules.gain_table.output.csv,
        output:
            md=update(f"{GAIN_TABLE}_by_n.md"),
            tex=update(f"{GAIN_TABLE}_by_n.tex"),
            csv=update(f"{GAIN_TABLE}_by_n.csv"),
            figure=update(f"{GAIN_FIGURE}_by_n.png"),
        params:
            systems=GAIN_SYSTEMS,
            version=1,
        log:
            f"logs/{GAIN.get('name')}_by_n.log",
        conda:
            "../envs/ehi.yaml"
        script:
            "../scripts/gain_scaling.py"

    rule properties_table:
        """The best learned partition's gain over IVF with as many lists beside what is measured of each
        dataset before training (rule collection_properties), and the trained benchmarks' QPS ratios:
        results/tables/<name>_properties (and _correlation), its figure. Asked for by name, never by
        `all`."""
        input:
            gains=rules.gain_table.output.csv,
            # each dataset's as measured; a dataset not measured has an empty row
            properties=[os.path.abspath(dataset_properties(n)) for n in GAIN_MEASURED],
            # the committed trained benchmarks, as they are
            matched=[os.path.abspath(trained_matched(n)) for n in GAIN_BENCHMARKED],
        output:
            md=update(f"{GAIN_TABLE}_properties.md"),
            tex=update(f"{GAIN_TABLE}_properties.tex"),
            csv=update(f"{GAIN_TABLE}_properties.csv"),
            correlation=[update(f"{GAIN_TABLE}_properties_correlation{ext}") for ext in (".md", ".tex", ".csv")],
            figure=update(f"{GAIN_FIGURE}/gain_vs_properties.png"),
        params:
            # the dataset of each properties and matched input, in their order
            measured=GAIN_MEASURED,
            benchmarked=GAIN_BENCHMARKED,
            version=1,
        log:
            f"logs/{GAIN.get('name')}_properties.log",
        conda:
            "../envs/ehi.yaml"
        script:
            "../scripts/properties_table.py"
