"""Rules chosen_ehi / chosen_de: a gridded setting's model is its dev-chosen point's (ehi.train.grid.copy_run)."""

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

import json
import shutil
from pathlib import Path

from ehi.train.grid import copy_run

log = setup(snakemake)
point = json.loads(Path(snakemake.input.choice).read_text())["point"]
run = Path(snakemake.output.encoder).parent
copy_run(snakemake.params.runs[point], run)
shutil.copy2(snakemake.params.logs[point], snakemake.output.log_table)
log.info("%s: the model of %s, chosen on dev", run, point)
