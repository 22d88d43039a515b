"""Rule world_calibration: worlds of a knob grid held to a real collection's facts (ehi.report.world_calibration)."""

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

import json

from ehi.core.io import read_table
from ehi.core.unfinished import hold
from ehi.report.report_files import write_table_pair
from ehi.report.world_calibration import calibration_markdown, calibration_table
from ehi.report.world_fit import kmr_shape

log = setup(snakemake)
attempt = hold(snakemake)  # its update() outputs: removed once they are written (ehi/core/unfinished.py)
spec = snakemake.params.calibration
target = {**json.loads(open(snakemake.input.geometry).read()),
          "exact_ndcg@10": kmr_shape(read_table(snakemake.input.summary)).attrs["exact_value"]}
table = calibration_table(spec.get("base", {}), spec.get("grid", {}), target,
                          progress=lambda row: log.info("world %s: distance %.3f", row, row["distance"]))
write_table_pair(table, snakemake.output.csv, calibration_markdown(table, spec.get("base", {}), spec["target"], target),
                 snakemake.output.md)
attempt.unlink()
