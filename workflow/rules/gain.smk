# The tree's gain over k-means IVF at equal work across a config's datasets (`gain:`; ehi/report/gain.py,
# gain_scaling.py): report rules over the datasets' per-query results and their data facts
# (results/<dataset>/data.json: N, training queries, a world's knobs), never typed sizes. Datasets of
# other configs (`gain.other_datasets`, e.g. the frozen real collections) join with their results as
# committed. Included by ../multi.smk.
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


GAIN = config.get("gain") or {}
GAIN_TABLE = f"results/tables/{GAIN.get('name')}"
GAIN_FIGURE = f"results/figures/{GAIN.get('name')}"
with exit_on_user_error("snakemake"):
    # {name: (its config, whether this config runs it)} in the table's order
    if not GAIN.get("name") and (GAIN.get("datasets") or GAIN.get("other_datasets")):
        raise ConfigError("config gain: no name (the stem of its tables and figures, e.g. scale_gain)")
    GAIN_DATASETS = gain_datasets(GAIN, DATASETS) if GAIN.get("name") else {}


def gain_input(name, path):
    """A dataset's file the gain reads: this config's rule output, or the committed file of another config's."""
    ours = GAIN_DATASETS[name][1]
    return report_input(f"results/{name}/{path}", REPORT_ONLY or not ours)


def gain_leaf_counts():
    """dev_leaf_count.json of the datasets whose leaf count was chosen on dev."""
    return [gain_input(n, "dev_leaf_count.json") for n, (cfg, _) in GAIN_DATASETS.items()
            if cfg.get("train", {}).get("branching") == "auto"]


if GAIN_DATASETS:

    rule gain_table:
        """The tree's gain over IVF at each budget of work, every dataset of `gain:`, and every system's
        values at those budgets (_systems), with the gain figure."""
        input:
            facts=[gain_input(n, "data.json") for n in GAIN_DATASETS],
            # a dataset's per-query tables are complete once its significance table is written
            significance=[gain_input(n, "significance.parquet") for n in GAIN_DATASETS],
            leaf_counts=gain_leaf_counts(),
        output:
            md=f"{GAIN_TABLE}.md",
            tex=f"{GAIN_TABLE}.tex",
            csv=f"{GAIN_TABLE}.csv",
            systems=multiext(f"{GAIN_TABLE}_systems", ".md", ".tex", ".csv"),
            figure=f"{GAIN_FIGURE}.png",
        params:
            datasets={n: {"branching": cfg.get("train", {}).get("branching"), "main_seed": cfg.get("train", {}).get("seed", 0),
                          "variant_systems": cfg.get("evaluation", {}).get("variant_systems") or {}}
                      for n, (cfg, _) in GAIN_DATASETS.items()},
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
            md=f"{GAIN_TABLE}_by_n.md",
            tex=f"{GAIN_TABLE}_by_n.tex",
            csv=f"{GAIN_TABLE}_by_n.csv",
            figure=f"{GAIN_FIGURE}_by_n.png",
        params:
            version=1,
        log:
            f"logs/{GAIN.get('name')}_by_n.log",
        conda:
            "../envs/ehi.yaml"
        script:
            "../scripts/gain_scaling.py"
