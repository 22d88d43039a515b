"""Rule evaluate: per-query metrics (ranx) of every search in one system's run file."""

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

from ehi.data.dataset import Dataset
from ehi.evaluate.config import EvaluationConfig
from ehi.evaluate.metric_registry import needs
from ehi.evaluate.metrics import per_query_metrics
from ehi.core.io import read_table, write_table
from ehi.core.unfinished import hold
from ehi.evaluate.xmc import train_inverse_propensity

log = setup(snakemake)
attempt = hold(snakemake)  # its update() outputs: removed once they are written (ehi/core/unfinished.py)
p = snakemake.params
cfg = EvaluationConfig.from_dict(p.evaluation)
dataset = Dataset.read(p.data_dir)
_, qrels = dataset.split(cfg.split)
run = read_table(snakemake.input.run, "run")
inv_prop = None
if needs(cfg.metrics, "inv_prop"):  # psp@k: propensities from the train split's label counts
    inv_prop = train_inverse_propensity(dataset, cfg.propensity)
per_query = per_query_metrics(run, qrels, p.dataset, len(dataset.corpus), cfg.metrics, inv_prop=inv_prop,
                              doc_ids=dataset.corpus.doc_id.astype(str).to_numpy())
write_table(per_query, "per_query", snakemake.output[0], meta={"split": cfg.split})
attempt.unlink()
