"""Rule evaluate: per-query metrics (ranx) of every search in one system's run file."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir)))  # noqa: F821 (snakemake is injected)
from _common import setup  # noqa: E402

from ehi.data.dataset import Dataset  # noqa: E402
from ehi.evaluate.config import EvaluationConfig  # noqa: E402
from ehi.evaluate.metric_registry import needs  # noqa: E402
from ehi.evaluate.metrics import per_query_metrics  # noqa: E402
from ehi.core.io import read_table, write_table  # noqa: E402
from ehi.evaluate.xmc import train_inverse_propensity  # noqa: E402

log = setup(snakemake)  # noqa: F821
p = snakemake.params  # noqa: F821
cfg = EvaluationConfig.from_dict(p.evaluation)
dataset = Dataset.read(p.data_dir)
_, qrels = dataset.split(cfg.split)
run = read_table(snakemake.input.run, "run")  # noqa: F821
inv_prop = None
if needs(cfg.metrics, "inv_prop"):  # psp@k: propensities from the train split's label counts
    inv_prop = train_inverse_propensity(dataset, cfg.propensity)
per_query = per_query_metrics(run, qrels, p.dataset, len(dataset.corpus), cfg.metrics, inv_prop=inv_prop,
                              doc_ids=dataset.corpus.doc_id.astype(str).to_numpy())
write_table(per_query, "per_query", snakemake.output[0], meta={"split": cfg.split})  # noqa: F821
