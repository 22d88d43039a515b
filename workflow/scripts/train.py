"""Rules train_ehi / train_de: one training run; writes the encoder (and tree) and the epoch log."""

import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir)))  # noqa: F821 (snakemake is injected)
from _common import setup  # noqa: E402

from ehi.data.dataset import Dataset  # noqa: E402
from ehi.encoder import load_encoder  # noqa: E402
from ehi.io import atomic_path  # noqa: E402
from ehi.checkpoint import set_aside_stale_checkpoint  # noqa: E402
from ehi.training import TrainConfig, train  # noqa: E402

log = setup(snakemake)  # noqa: F821
params = snakemake.params  # noqa: F821
cfg = TrainConfig.from_dict(dict(params.train))
work_dir = Path(snakemake.output.encoder).parent  # noqa: F821
dataset = Dataset.read(params.data_dir)
encoder = load_encoder(params.encoder, max_length=cfg.max_length, device=cfg.device, seed=cfg.seed)
set_aside_stale_checkpoint(work_dir, cfg)  # a changed config retrains from scratch
train(dataset, encoder, cfg, work_dir, split="train", resume=True)
with atomic_path(snakemake.output.log_table) as tmp:  # noqa: F821
    shutil.copyfile(work_dir / "train_log.parquet", tmp)
