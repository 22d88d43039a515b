"""Rule prepare_data: dataset config -> corpus/queries/qrels Parquet."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir)))  # noqa: F821 (snakemake is injected)
from _common import setup  # noqa: E402

from ehi.data.manifest import write_manifest  # noqa: E402
from ehi.data.prepare import prepare_dataset  # noqa: E402
from ehi.data.query_split import split_record  # noqa: E402

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
    query_split=cfg.get("query_split"),
)
data_dir = Path(snakemake.output.corpus).parent  # noqa: F821
dataset.write(data_dir, meta={"dataset_config": cfg})
# sha256 of the source files and of the tables just written: checked before every later run
split = cfg.get("query_split")
extra = {"query_split": split_record(dataset, split["fractions"], split["seed"])} if split else None
write_manifest(cfg, data_dir, dataset.queries.split.value_counts().to_dict(), extra)
