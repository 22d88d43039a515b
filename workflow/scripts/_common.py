"""Shared start-up for the rule scripts: log to the rule's log file, keep hubs offline by default."""

import logging
import os
import sys


def setup(snakemake) -> logging.Logger:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    handlers = [logging.StreamHandler(sys.stderr)]
    if snakemake.log:
        handlers.append(logging.FileHandler(snakemake.log[0], mode="w"))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s", handlers=handlers, force=True)
    if "torch" in sys.modules:  # keep torch within the threads Snakemake gave this job
        sys.modules["torch"].set_num_threads(max(1, int(snakemake.threads)))
    return logging.getLogger(snakemake.rule)
