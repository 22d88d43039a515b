"""Rule prepare_data: dataset config -> corpus/queries/qrels Parquet."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir)))  # noqa: F821 (snakemake is injected)
from _common import setup  # noqa: E402

from ehi.data.prepare import prepare_dataset  # noqa: E402

log = setup(snakemake)  # noqa: F821
cfg = dict(snakemake.params.dataset)  # noqa: F821
dataset = prepare_dataset(
    name=cfg["name"],
    source=cfg["source"],
    path=cfg.get("path"),
    cache_dir=cfg["cache_dir"],
    dev_fraction=cfg["dev_fraction"],
    dev_seed=cfg["dev_seed"],
    synthetic=cfg.get("synthetic"),
)
dataset.write(Path(snakemake.output.corpus).parent, meta={"dataset_config": cfg})  # noqa: F821
