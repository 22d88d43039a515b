"""Rule publish_data: the dataset prepare_data wrote aside, moved into place (the manifest last)."""

from pathlib import Path

from ehi.core.rule_script import setup  # first: it pins the CPU kernels before torch loads

from ehi.data.manifest import publish_prepared

log = setup(snakemake)
publish_prepared(Path(snakemake.input.manifest).parent, Path(snakemake.output.manifest).parent)
