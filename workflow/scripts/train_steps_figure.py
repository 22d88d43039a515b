"""Rule train_steps_figure: the step log's three panels (ehi.report.step_figure) -> PNG."""

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

from ehi.core.io import read_table
from ehi.report.step_figure import collapse_onset, plot_step_log

log = setup(snakemake)
steps = read_table(snakemake.input[0])
plot_step_log(steps, snakemake.output[0], title=snakemake.params.title)
log.info("step log figure -> %s (more than 5%% of leaves empty from step %s)", snakemake.output[0],
         collapse_onset(steps))
