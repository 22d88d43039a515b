"""Rule train_steps: an EHI training's step log (train.diag_every, ehi.train.step_log), as results keep it."""

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

from pathlib import Path

import pyarrow.parquet as pq

from ehi.core.errors import DataError
from ehi.core.io import replace_parquet

log = setup(snakemake)
run_log = Path(snakemake.params.run_log)
if not run_log.is_file():
    raise DataError(f"{run_log}: no step log; the training ran without train.diag_every (delete "
                    f"{snakemake.input.indexer} to train again with it)")
# the same values keep the file's bytes (ehi.core.io.replace_parquet): a retraining that logs the
# same steps leaves git clean
replace_parquet(pq.read_table(run_log), snakemake.output[0])
log.info("step log: %d rows -> %s", pq.read_metadata(run_log).num_rows, snakemake.output[0])
