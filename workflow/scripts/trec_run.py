"""Rule trec_run: one system's run (every budget of its sweep) as TREC run files, one per budget,
with the evaluation split's qrels beside them."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir)))  # noqa: F821 (snakemake is injected)
from _common import setup  # noqa: E402

from ehi.core.io import read_table  # noqa: E402
from ehi.evaluate import trec  # noqa: E402

log = setup(snakemake)  # noqa: F821
out = Path(snakemake.output[0])  # noqa: F821
run = read_table(snakemake.input.run, "run")  # noqa: F821
qrels = read_table(Path(snakemake.params.data_dir) / "qrels.parquet", "qrels")  # noqa: F821
qrels = qrels[qrels.split == snakemake.params.split]  # noqa: F821
paths = trec.write_trec_runs(run, out)
qrels_path = trec.write_trec_qrels(qrels, out / trec.QRELS_FILE)
log.info("wrote %d TREC run files and the %s split's qrels to %s", len(paths), snakemake.params.split, out)  # noqa: F821
for stem, missing in trec.judged_without_results(run, qrels).items():
    if missing:
        log.info("%s: %d judged queries retrieved nothing (no line in the run; they score 0)", stem, missing)
log.info("score as the pipeline does (averaging over every judged query): %s",
         trec.TREC_EVAL_COMMAND.format(qrels=qrels_path, run=paths[0] if paths else out / "<budget>.trec"))
