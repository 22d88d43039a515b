"""The one map from names to paths: where the pipeline writes what a config names.

A config names things (a collection the DAG builds, an encoding, a world, a tower, a dataset, a
setting's variant and seed, a trained tree); rules, the report and the benchmarks ask this module
where each one lives, and carry the name beside the path from then on. Nothing reads a name back
out of a path: a function that needs the name is handed it. A job's variant wildcard is looked up
among the settings its config declares (:class:`Setting`), not split back into the keys it sets.

The layout (workflow/rules/*.smk write it):

- ``resources/sources/<collection>``, ``resources/vectors/<encoding>``,
  ``resources/worlds/<world>``, ``resources/towers/<tower>/tower.json``: the producers' folders
  (:data:`PRODUCED_ROOTS`, workflow/rules/produced.smk);
- ``resources/<dataset>/<variant>/<model>/``: a dataset's heavy artefacts, one folder a setting
  (``main``, an ablation row's ``key~value/...`` path, a seed replica ``.../seed~S``) and model
  (``pre``, ``de``, ``ehi``), a trained tree's index in the EHI model's ``index/``;
- ``results/<dataset>/properties.json``: what is measured of a dataset before training;
- ``results/benchmarks/trained_<dataset>/``: the trained-index benchmark of one dataset.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from ehi.core.errors import ConfigError

# config section -> the folder its entries are written under (workflow/rules/produced.smk)
PRODUCED_ROOTS = {"collections": "resources/sources", "encodings": "resources/vectors", "worlds": "resources/worlds",
                  "towers": "resources/towers"}
# config section -> the file its rule writes inside an entry's folder (the folder itself where absent)
PRODUCED_FILES = {"towers": "tower.json"}
# the sections whose folders hold vectors a tower or a dataset reads, in the order a name is looked up
VECTOR_SECTIONS = ("encodings", "worlds")


def produced_folder(section: str, name: str) -> str:
    """The folder the ``section`` entry ``name`` is written into: ``("encodings", "webster_minilm")``
    -> ``resources/vectors/webster_minilm``."""
    return str(PurePosixPath(PRODUCED_ROOTS[section]) / name)


def produced_output(section: str, name: str) -> str:
    """The rule output that makes the entry: its folder, or the file its rule writes in it."""
    extra = PRODUCED_FILES.get(section)
    return str(PurePosixPath(produced_folder(section, name)) / extra) if extra else produced_folder(section, name)


def dataset_resources(dataset: str) -> str:
    """A dataset's heavy artefacts (git-ignored): its prepared data and every setting's models."""
    return f"resources/{dataset}"


def dataset_results(dataset: str) -> str:
    """A dataset's small cached results (committed): summaries, per-query tables, its report's inputs."""
    return f"results/{dataset}"


def dataset_properties(dataset: str) -> str:
    """What is measured of a dataset before training (rule collection_properties)."""
    return f"{dataset_results(dataset)}/properties.json"


def dataset_logs(dataset: str) -> str:
    """A dataset's job logs and Snakemake timings."""
    return f"logs/{dataset}"


def model_folder(dataset: str, variant: str, model: str) -> str:
    """One model of one setting (``variant``: ``main``, an ablation row's path or a seed replica):
    its embeddings (``emb/``) and, for EHI, its index (``index/``)."""
    return f"{dataset_resources(dataset)}/{variant}/{model}"


@dataclass(frozen=True)
class Setting:
    """What one variant path a config declares stands for: the train keys it sets ({key: the text its
    path writes}, :func:`ehi.core.config_schema.ablation_rows`), and the setting it is a seed replica
    of with its seed (``replicates`` itself and ``seed`` None where it is none)."""

    keys: dict[str, str]
    replicates: str
    seed: int | None = None

    def values(self) -> dict:
        """The keys as the values a training is given: {'height': '1', 'floor': 'kmeans'} -> {'height': 1, 'floor': 'kmeans'}."""
        import yaml

        def value(text):
            # YAML reads 1e-12 (Python's spelling of a small float, as a variant path writes it) as a string
            parsed = yaml.safe_load(text)
            try:
                return float(parsed) if isinstance(parsed, str) else parsed
            except ValueError:
                return parsed

        return {k: value(v) for k, v in self.keys.items()}


def variant_setting(settings: dict[str, Setting], variant: str) -> Setting:
    """The setting ``variant`` (a job's variant wildcard) names among a config's ``settings``
    ({variant path: Setting}, built once from the config), refused in one line where it names none."""
    try:
        return settings[variant]
    except KeyError:
        raise ConfigError(f"variant {variant!r}: no setting of this config has that path; its settings are main, "
                          "each row of ablations, each point of a train key's {choose: [...]} grid and each "
                          "other seed of train.seeds (a seed~S replica)") from None


def setting_train_log(results: str, variant: str, model: str) -> str:
    """One training's per-epoch log (rule train): ``<results>/<variant>/train_log/<model>.parquet``,
    ``results`` a dataset's results folder (:func:`dataset_results`)."""
    return f"{results}/{variant}/train_log/{model}.parquet"


def training_folder(dataset: str, variant: str, model: str) -> str:
    """One model's training run (rules train_ehi, train_de: its ``--out-dir``): checkpoint, encoder, indexer."""
    return f"{model_folder(dataset, variant, model)}/train"


def trained_index(dataset: str, variant: str) -> str:
    """The trained tree of one setting: the index folder the search rule loads."""
    return f"{model_folder(dataset, variant, 'ehi')}/index"


def trained_benchmark_folder(dataset: str) -> str:
    """The trained-index benchmark's tables and figure of one dataset (rule trained_benchmark)."""
    return f"results/benchmarks/trained_{dataset}"


def trained_matched(dataset: str) -> str:
    """The trained-index benchmark's table at matched quality (what the gain's properties read)."""
    return f"{trained_benchmark_folder(dataset)}/trained_matched.parquet"
