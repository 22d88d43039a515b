"""What every stage stands on: ``io`` (atomic, schema-checked Parquet) and ``provenance`` (what made a
result, and what a rerun of equal values leaves as it was),
``schemas`` (the data contracts), ``weights`` (checked safetensors loading), ``errors`` (errors a
user can fix), ``config`` (typed-section base, canonical params), ``config_files``,
``config_schema`` and ``config_values`` (the config read and refused in one line), ``schema_build`` (the config's JSON schema built from the typed sections), ``catalog`` (the one map from names to paths), ``dataset_source`` (what a config names by its producer), ``multi_config`` (several
datasets in one config: each one's config, the sections over them checked), ``plugins``
(extensions), ``kernels`` (pinned CPU code paths), ``pretrained`` and ``hub_cache`` (the offline
encoder, the Hugging Face cache), ``ivf`` (FAISS-IVF's quantizer), ``ranking`` (the rules rankings
are read by), ``norms`` (the largest norm a ranked vector may have), ``work`` (the cost model: documents scored plus routing), ``rank_metrics`` (ranx's ranking metrics without numba), ``metric_names`` (what a metric name and its values may be), ``versions`` and
``staleness`` (stage versions and the results they made), ``fingerprint`` (an encoder's identity as a rule param), ``rule_script`` (the start of every
rule script), ``unfinished`` (a failed job's update() outputs, done again next run), ``console`` (the job labels and Snakemake's line a job on the console)."""

__version__ = "0.1.0"  # the package's (pyproject.toml's); here, below every module that stamps it
