"""What ``ehi compare DIR`` runs: the config it layers, the folder's own keys, and the timed tree.

- A folder with training judgements (``qrels/train.tsv``) gets the decisive comparison,
  config/embeddings_decisive.yaml: the dual encoder (DE, a linear tower over the folder, its rate
  chosen on dev), the two-stage trees on DE's frozen vectors, the frozen trees on the vectors as
  given, and every peer on both. The folder's own keys name the tower (``towers:``, written by rule
  ``write_tower`` under the run's folder) and make it the encoder.
- ``--quick`` gets config/embeddings.yaml, the frozen study (the vectors as given, their identity
  tower the encoder, the tree trained alone), one seed unless ``--seeds`` says otherwise.
- Both train trees on the training judgements and choose on the dev ones, so a folder without
  either is refused in one line before anything runs.
- ``--time`` adds, once the trees are trained, config/embeddings_decisive.yaml's ``trained_benchmark``
  section on the two-stage tree with the larger dev area (:func:`best_two_stage`), flat and PQ.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import yaml

from ehi.core.catalog import model_folder, produced_folder, trained_benchmark_folder
from ehi.core.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
FROZEN = REPO / "config" / "embeddings.yaml"
DECISIVE = REPO / "config" / "embeddings_decisive.yaml"
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
TWO_STAGE = "two_stage"  # the decisive config's table of trees trained alone on DE's frozen vectors


def check_judgements(folder: Path) -> None:
    """Every tree trains on ``qrels/train.tsv`` and is chosen on ``qrels/dev.tsv``: one line where either is missing."""
    for split, why in (("train", "every tree is trained on them"),
                       ("dev", "the leaf count and each tree's kept epoch are chosen on them")):
        if not (folder / "qrels" / f"{split}.tsv").is_file():
            raise ConfigError(f"{folder} has no {split} judgements (qrels/{split}.tsv): {why}, in the frozen "
                              "study as in the decisive comparison (docs/embeddings.md)")


def tower_name(name: str) -> str:
    """The linear tower over the folder, as ``towers:`` names it (resources/towers/<it>/)."""
    return f"{name}_linear"


def config_file(quick: bool) -> Path:
    return FROZEN if quick else DECISIVE


def own_config(folder: Path, name: str, seeds: list[int] | None, quick: bool) -> dict:
    """The keys of the folder's own, layered after :func:`config_file`: the dataset, its encoder
    (the identity tower, or the linear tower written over the folder), and the seeds when given
    (``--quick``: seed 0 unless given)."""
    own = {"dataset": {"name": name, "source": "embeddings", "path": str(folder)}}
    if quick:
        own["encoder"] = {"name": str(folder)}
    else:
        own["towers"] = {tower_name(name): {"vectors": str(folder), "kind": "linear"}}
        own["encoder"] = {"name": produced_folder("towers", tower_name(name))}
    seeds = seeds or ([0] if quick else None)
    if seeds:
        own["train"] = {"seeds": [int(seed) for seed in seeds]}
    return own


def variant_systems(path: Path = DECISIVE) -> dict[str, tuple[str, str]]:
    """``{system: (ablation row, variant path)}`` of the trees the config reports by name."""
    from ehi.evaluate.variant_systems import config_variant_paths

    config = yaml.safe_load(path.read_text())
    paths = config_variant_paths(config, SCHEMA)
    rows = config["evaluation"]["variant_systems"]
    return {name: (rows[name].rpartition("/")[0], target.rpartition("/")[0]) for name, target in paths.items()}


def dev_areas(results: Path) -> dict[str, float]:
    """``{system: the dev value its training kept}`` of each two-stage tree (train.seed's run) whose
    training log is under ``results`` (results/<name>); the area of its dev curve, as selection read it."""
    from ehi.report.dev_choice import kept_dev_value

    out = {}
    for system, (row, variant) in variant_systems().items():
        log = results / variant / "train_log" / "ehi.parquet"
        if row.startswith(f"{TWO_STAGE}[") and log.is_file():
            out[system] = kept_dev_value(pd.read_parquet(log))[2]
    return out


def best_two_stage(results: Path) -> str | None:
    """The two-stage tree with the larger dev area (the first on ties; None before any is trained)."""
    areas = {system: area for system, area in dev_areas(results).items() if area == area}  # NaN: no dev value
    return max(areas, key=lambda s: areas[s]) if areas else None


def first_two_stage() -> str:
    """The paper's start on DE's vectors: what a plan names before any tree is trained."""
    return next(s for s, (row, _) in variant_systems().items() if row.startswith(f"{TWO_STAGE}["))


def timed_section(name: str, tree: str) -> dict:
    """The ``trained_benchmark`` keys that name the dataset and the timed tree, flat and as PQ
    leaves; its other settings are config/embeddings_decisive.yaml's."""
    row = variant_systems()[tree][0]
    return {"trained_benchmark": {"dataset": name, "trees": {tree: row, f"{tree}-pq": row}}}


def timed_report(name: str) -> str:
    """rule trained_benchmark's report, relative to the run's folder."""
    return f"{trained_benchmark_folder(name)}/trained.md"


def search_index(name: str, quick: bool, tree: str | None) -> str:
    """The searchable index the run leaves: the frozen study's tree, or the two-stage tree ``tree``
    (by default the paper's start)."""
    variant = "main" if quick else variant_systems()[tree or first_two_stage()][1]
    return f"{model_folder(name, variant, 'ehi')}/search_index"
