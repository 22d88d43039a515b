"""Rule trained_benchmark: one dataset's trained indexes at equal quality (benchmarks.trained)."""

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

from ehi.core.unfinished import hold

import json
from pathlib import Path

from benchmarks import trained
from ehi.core.catalog import dataset_logs, dataset_resources

log = setup(snakemake)
attempt = hold(snakemake)  # its update() outputs: removed once they are written (ehi/core/unfinished.py)
ds, settings = snakemake.params.dataset, snakemake.params.settings
argv = [dataset_resources(ds), str(Path(snakemake.output.md).parent), "--logs", dataset_logs(ds)]
for name, variant in snakemake.params.trees.items():
    argv += ["--tree", f"{name}={variant}"]
if snakemake.input.leaf_count:  # the peers tuned over the grid the dataset's own search rule tuned over
    argv += ["--lists", *map(str, json.loads(Path(snakemake.input.leaf_count[0]).read_text())["grid"])]
elif snakemake.params.lists:  # ... or over its configured list counts
    argv += ["--lists", *map(str, snakemake.params.lists)]
flags = {"systems": "--systems", "hnsw_m": "--hnsw-m", "threads": "--threads"}
for key, flag in flags.items():
    if settings.get(key):
        argv += [flag, *map(str, settings[key])]
for key, flag in {"max_frac": "--max-frac", "rounds": "--rounds", "budget_cost": "--budget-cost", "note": "--note"}.items():
    if settings.get(key) is not None:
        argv += [flag, str(settings[key])]
if settings.get("every_build"):
    argv += ["--every-build"]
log.info("python -m benchmarks.trained %s", " ".join(argv))
trained.main(argv)
attempt.unlink()
