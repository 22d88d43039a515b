"""Rule prepare_data: dataset config -> corpus/queries/qrels Parquet."""

from pathlib import Path

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

from ehi.data.manifest import write_manifest
from ehi.data.prepare import prepare_dataset
from ehi.data.query_split import split_record

log = setup(snakemake)
cfg = dict(snakemake.params.dataset)
dataset = prepare_dataset(
    name=cfg["name"],
    source=cfg["source"],
    path=cfg.get("path"),
    cache_dir=cfg["cache_dir"],
    dev_fraction=cfg["dev_fraction"],
    dev_seed=cfg["dev_seed"],
    synthetic=cfg.get("synthetic"),
    query_split=cfg.get("query_split"),
    train_queries=cfg.get("train_queries"),
)
data_dir = Path(snakemake.output.corpus).parent
dataset.write(data_dir, meta={"dataset_config": cfg})
# sha256 of the source files and of the tables just written: checked before every later run
split = cfg.get("query_split")
extra = {"query_split": split_record(dataset, split["fractions"], split["seed"])} if split else None
write_manifest(cfg, data_dir, dataset.queries.split.value_counts().to_dict(), extra)
