"""One training job, as rules train_ehi and train_de run it (``workflow/scripts/train.py`` is its
command): the settings resolved (a gridded setting's dev choice, a leaf count chosen by rule
dev_leaf_count), the frozen layers' cache shared across the dataset's trainings, the training run,
and its epoch log copied to results without wall-clock seconds.

The rules run it as a command, under ``python -m torch.distributed.run`` when a job has several
GPUs (every rank runs it with the same arguments; rank 0 alone writes, see ehi.train.distributed):

    python workflow/scripts/train.py --data-dir D --encoder NAME --train "{'epochs': 5, ...}" \\
        --out-dir W --log-table T --threads N

``--train`` is the TrainConfig as a Python literal: what Snakemake prints for the rule's ``train``
param. ``python -m ehi.train.job`` takes the same arguments.
"""

from __future__ import annotations

import argparse
import ast
import json
import logging
import os
import shutil
import sys
from pathlib import Path

from ehi.core.kernels import pin_kernels


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", required=True, help="folder of corpus/queries/qrels.parquet")
    parser.add_argument("--encoder", required=True, help="encoder name or folder (ehi.model.encoder.load_encoder)")
    parser.add_argument("--train", required=True, type=ast.literal_eval, help="TrainConfig as a Python dict literal")
    parser.add_argument("--out-dir", required=True, help="run folder: checkpoint/, encoder/, indexer.*")
    parser.add_argument("--log-table", required=True, help="where the epoch log (Parquet) is copied")
    parser.add_argument("--threads", type=int, default=1, help="CPU threads of the job, shared by its processes")
    parser.add_argument("--layer-cache-dir", default=None,
                        help="folder shared by a dataset's trainings for the frozen layers' outputs (train.freeze_layers)")
    return parser.parse_args(argv)


def share_layer_cache(work_dir: Path, root: Path, cfg) -> None:
    """Point the run's ``layer_cache`` at a folder every training of the dataset with the same frozen
    layers shares (seeds, variants): the cache checks its fingerprint (texts, frozen weights, length)
    and rebuilds on a mismatch, so sharing never serves another encoder's states."""
    shared = (root / f"k{cfg.freeze_layers}-{cfg.layer_cache_dtype}-len{cfg.max_length}").resolve()
    shared.mkdir(parents=True, exist_ok=True)
    link = work_dir / "layer_cache"
    if link.is_symlink() and link.resolve() == shared:
        return
    if link.is_symlink() or link.is_file():
        link.unlink()
    elif link.exists():
        shutil.rmtree(link)
    work_dir.mkdir(parents=True, exist_ok=True)
    link.symlink_to(shared, target_is_directory=True)


def write_results_log(run_log: Path, log_table: str) -> None:
    """The epoch log as results keep it: without its wall-clock ``seconds``, which change on every
    run (the run folder's own log keeps them, and so does the job's Snakemake benchmark file); a
    log whose values are those of the file there keeps its bytes (ehi.core.io.replace_parquet).
    Under Snakemake no file is there: the rule's log table is no update() output (train.smk)."""
    import pyarrow.parquet as pq

    from ehi.core.io import replace_parquet

    table = pq.read_table(run_log)
    if "seconds" in table.column_names:
        table = table.drop_columns(["seconds"])
    replace_parquet(table, log_table)


def resolved_settings(train: dict) -> dict:
    """The rule's ``train`` param as the run reads it: a gridded setting's other seed takes its
    keys at the dev choice (``dev_choice``: rule dev_grid's JSON; ehi.train.grid), and a leaf count
    given as ``auto:<rule dev_leaf_count's JSON>`` the count that rule chose."""
    settings = dict(train)
    if "dev_choice" in settings:
        from ehi.train.grid import apply_choice

        settings = apply_choice(settings, json.loads(Path(settings.pop("dev_choice")).read_text())["settings"])
    if str(settings.get("branching")).startswith("auto:"):
        settings["branching"] = int(json.loads(Path(settings["branching"][5:]).read_text())["branching"])
    return settings


def main(args: argparse.Namespace) -> None:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    pin_kernels()  # before torch runs a kernel (ehi/core/kernels.py)
    import torch

    from ehi.train.checkpoint import PREVIOUS, keep_previous_model, set_aside_stale_checkpoint
    from ehi.data.dataset import Dataset
    from ehi.train.distributed import init_from_env
    from ehi.model.encoder import load_encoder
    from ehi.train.config import TrainConfig
    from ehi.train.loop import train
    from ehi.train.progress import job_label

    cfg = TrainConfig.from_dict(resolved_settings(args.train))
    ctx = init_from_env(cfg.device)
    # stderr, which the rule sends to its log file; other ranks: warnings only
    logging.basicConfig(level=logging.INFO if ctx.is_main else logging.WARNING, force=True,
                        format=f"%(asctime)s [rank {ctx.rank}] %(name)s %(levelname)s %(message)s")
    if ctx.is_main:  # start, epoch and end lines on stdout too, which the rule leaves on the console
        console = logging.StreamHandler(sys.stdout)
        label = job_label(args.out_dir)  # dataset, seed and setting: several trainings share the console
        console.setFormatter(logging.Formatter(f"%(asctime)s {label} %(message)s".replace("  ", " ")))
        logging.getLogger("ehi.train.progress").addHandler(console)
    torch.set_num_threads(max(1, args.threads // int(os.environ.get("LOCAL_WORLD_SIZE", 1))))
    work_dir = Path(args.out_dir)
    dataset = Dataset.read(args.data_dir)
    encoder = load_encoder(args.encoder, max_length=cfg.max_length, device=cfg.device, seed=cfg.seed)
    if ctx.is_main:
        set_aside_stale_checkpoint(work_dir, cfg)  # a changed config retrains from scratch
        if args.layer_cache_dir and cfg.freeze_layers:
            share_layer_cache(work_dir, Path(args.layer_cache_dir), cfg)
    ctx.barrier()
    try:
        train(dataset, encoder, cfg, work_dir, split="train", resume=True, progress=ctx.is_main)
    except BaseException:
        if ctx.is_main and (work_dir / PREVIOUS / "encoder").is_dir():
            logging.getLogger("train").error("training failed; the last model trained here is kept, loadable, in %s",
                                             work_dir / PREVIOUS)
        raise
    if ctx.is_main:
        write_results_log(work_dir / "train_log.parquet", args.log_table)
        keep_previous_model(work_dir)  # what a failed retraining leaves loadable


if __name__ == "__main__":
    from ehi.core.errors import report_uncaught

    report_uncaught(logging.getLogger("train"))  # bad input: one line in the rule's log, no traceback
    main(parse_args())
