# The settings a config declares and what each one trains with: main, the ablation rows, the grid
# points chosen on dev and the seed replicas (ehi.evaluate.variant_systems.declared_settings), the train params of
# a setting's model, the systems it searches, and the names its jobs' console lines call it by.
# Included right after common.smk (the dataset's folders, the checks); the stage files read it.
import json
import os

from ehi.core.catalog import training_folder, variant_setting
from ehi.core.config import canonical
from ehi.core.config_schema import ablation_rows, variant_path
from ehi.core.console import TRAININGS_ENV, VARIANT_NAMES_ENV, console_names, training_jobs
from ehi.core.errors import exit_on_user_error
from ehi.evaluate.seeds import replica, setting_replicas
from ehi.evaluate.variant_systems import declared_settings, resolve as resolve_variant_systems
from ehi.report.styles import variant_names
from ehi.train.grid import as_choices, grid_points, model_grid
from ehi.train.model_keys import model_settings


# {ablation name: [its rows' settings]}, and {ablation name: [variant path]}, their Paramspace-style
# key~value/... paths (ehi.core.config_schema)
ABLATION_ROWS = ablation_rows(config["ablations"], config["train"], TRAIN_KEY_ORDER)
ABLATIONS = {name: list(map(variant_path, rows)) for name, rows in ABLATION_ROWS.items()}
# {variant path: its Setting} of every setting the config declares (ehi.evaluate.variant_systems.declared_settings):
# main and the ablation rows here, with their grid points and seed replicas once those are named below.
# A job's variant wildcard is looked up here (variant_setting), so a path the config declares nowhere is refused
SETTINGS = declared_settings(ABLATION_ROWS, TRAIN_KEY_ORDER)


def variant_overrides(variant):
    """The train keys a variant sets, as values: {'height': '1', 'branching': '64'} -> {'height': 1, 'branching': 64}."""
    return variant_setting(SETTINGS, variant).values()


def split_replica(variant):
    """(the setting ``variant`` replicates, its seed): (variant, None) where it is no seed replica."""
    setting = variant_setting(SETTINGS, variant)
    return setting.replicates, setting.seed


def train_params(variant, model, dev_choice=()):
    """The TrainConfig of one model in one variant, keys sorted: as a param, a reordered config must
    not rerun training. DE gets only the keys DE reads (ehi.train.model_keys), so a tree setting
    reruns EHI alone. ``seeds`` is the workflow's (which replicas exist), not the training's: a
    replica's own seed comes in among the keys its setting sets."""
    params = {**config["train"], **variant_overrides(variant), "max_length": config["encoder"]["max_length"]}
    # a setting's other seeds train at its dev choice (ehi.train.grid.apply_choice reads it in the job)
    params.update(as_choices(variant_grid(split_replica(variant)[0], model)))
    params.pop("seeds", None)
    if params.get("dev_cost") is None:  # unset: dev selection reads the tables' cost model
        params.pop("dev_cost", None)
        if config["search"]["budget_cost"] != "documents":
            params["dev_cost"] = config["search"]["budget_cost"]
    params = model_settings(params, model)
    if dev_choice:  # the file the job reads its gridded keys' values from (as branching's auto: below)
        params["dev_choice"] = dev_choice[0]
    if params.get("branching") == "auto":  # the training reads rule dev_leaf_count's choice from there
        params["branching"] = f"auto:{LEAF_COUNT}"
    return canonical(params)


def leaf_count_input(wildcards):
    """The dev leaf-count choice a training reads where its branching is auto (else nothing)."""
    return [LEAF_COUNT] if str(train_params(wildcards.variant, "ehi")["branching"]).startswith("auto:") else []


def variant_systems(variant):
    base, seed = split_replica(variant)
    systems = config["search"]["systems"] if base == "main" else config["ablation_systems"]
    # a replica's untrained encoder is the variant's own: searched once, in the variant itself
    return systems if seed is None else [s for s in systems if not s.startswith("pre+")]


def variant_grid(variant, model):
    """The grid ``model`` is chosen over in ``variant`` (main or an ablation row; ehi/train/grid.py)."""
    if variant != "main" and variant not in ABLATION_PATHS:  # a grid point, or another seed's path
        return {}
    return model_grid(TRAIN_GRID, model, variant_overrides(variant))


def grid_points_of(variant, model):
    """{point path: its grid values} that ``model`` is trained at in ``variant``, for its dev choice."""
    return grid_points(variant_setting(SETTINGS, variant).keys, variant_grid(variant, model), TRAIN_KEY_ORDER)


def dev_choice_input(wildcards, model):
    """The dev choice another seed of a gridded setting trains at (nothing elsewhere)."""
    base, seed = split_replica(wildcards.variant)
    return [f"{RES}/{base}/dev_grid/{model}.json"] if seed is not None and variant_grid(base, model) else []


def start_encoder(variant):
    """Where EHI's encoder starts: the configured encoder, or (``train.encoder_init: de``) the main
    setting's DE of the same seed, as the paper starts EHI from an encoder fine-tuned on the task."""
    if train_params(variant, "ehi").get("encoder_init") != "de":
        return config["encoder"]["name"]
    _, seed = split_replica(variant)
    return f"{R}/{'main' if seed is None else replica('main', seed)}/de/train/encoder"


def start_encoder_input(wildcards):
    start = start_encoder(wildcards.variant)
    return [start] if start != config["encoder"]["name"] else []


VARIANTS = ["main"] + [v for vs in ABLATIONS.values() for v in vs]
ABLATION_PATHS = set(VARIANTS[1:])
# {model: [the settings it is chosen on dev in]}: main and ablation rows whose models read a grid key
GRIDDED = {m: [v for v in VARIANTS if variant_grid(v, m)] for m in ("de", "ehi")}
# the dev-choice records of every gridded setting (rule dev_grid), what `all` and `train_all` ask for
GRID_CHOICES = [f"{RES}/{v}/dev_grid/{m}.parquet" for m, vs in GRIDDED.items() for v in vs
                if m in {s.split("+")[0] for s in variant_systems(v)}]
GRID_TABLE = [f"results/tables/{DS}_dev_grid.md"] if GRID_CHOICES else []
# Systems of an ablation variant reported beside the main setting's (evaluation.variant_systems,
# e.g. the k-means-started tree as ehi-warm+tree: stabiliser/ehi+tree): their cached per-query rows,
# relabelled. Each names its ablation row; the rules read the row's variant path (VARIANT_SYSTEM_PATHS)
with exit_on_user_error("snakemake"):
    VARIANT_SYSTEMS = resolve_variant_systems(config["evaluation"].get("variant_systems"), ABLATIONS,
                                              variant_systems, config["search"]["systems"])
VARIANT_SYSTEM_PATHS = {spec.name: spec.path for spec in VARIANT_SYSTEMS}
# train.seeds: the main setting and the variants reported beside it, once per seed ({variant: {its
# own path: train.seed, then a seed~S replica per other seed: S}}); the replicas are variants like any other.
SEEDS = config["train"]["seeds"] or [config["train"]["seed"]]
SEED_REPLICAS = setting_replicas(VARIANT_SYSTEMS, SEEDS, config["train"]["seed"])
REPLICAS = [r for v, rs in SEED_REPLICAS.items() for r in rs if r != v]
# every setting declared: each grid point (trained with train.seed, ehi/train/grid.py) and each
# replica (its setting's keys and its own train.seed) join main and the rows
SETTINGS = declared_settings(ABLATION_ROWS, TRAIN_KEY_ORDER, TRAIN_GRID, SEED_REPLICAS)
# the names a job's console lines call its setting by, a replica's with its seed (ehi.core.console.label):
# the environment, not a param, since a param or shell change would retrain every cached model
os.environ[VARIANT_NAMES_ENV] = json.dumps({**json.loads(os.environ.get(VARIANT_NAMES_ENV) or "{}"), **console_names(
    {v: n for v, n in variant_names(ABLATION_ROWS).items() if v != "main"}, SEED_REPLICAS)})
# each training's dataset and setting, by the folder the training script is handed (--out-dir), gives
# its console label (ehi.train.progress.job_label), from the environment for the same reason
os.environ[TRAININGS_ENV] = json.dumps({**json.loads(os.environ.get(TRAININGS_ENV) or "{}"), **training_jobs(
    DS, {training_folder(DS, v, m): v for v in SETTINGS for m in ("de", "ehi")})})
