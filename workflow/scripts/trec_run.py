"""Rule trec_run: one system's run (every budget of its sweep) as TREC run files, one per budget,
with the evaluation split's qrels beside them."""

from pathlib import Path

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

from ehi.core.io import read_table
from ehi.evaluate import trec

log = setup(snakemake)
out = Path(snakemake.output[0])
run = read_table(snakemake.input.run, "run")
qrels = read_table(Path(snakemake.params.data_dir) / "qrels.parquet", "qrels")
qrels = qrels[qrels.split == snakemake.params.split]
paths = trec.write_trec_runs(run, out)
qrels_path = trec.write_trec_qrels(qrels, out / trec.QRELS_FILE)
log.info("wrote %d TREC run files and the %s split's qrels to %s", len(paths), snakemake.params.split, out)
for stem, missing in trec.judged_without_results(run, qrels).items():
    if missing:
        log.info("%s: %d judged queries retrieved nothing (no line in the run; they score 0)", stem, missing)
log.info("score as the pipeline does (averaging over every judged query): %s",
         trec.TREC_EVAL_COMMAND.format(qrels=qrels_path, run=paths[0] if paths else out / "<budget>.trec"))
