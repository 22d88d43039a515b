"""Performance benchmarks of EHI against FAISS and ScaNN; `snakemake benchmarks` runs them.

One module per measurement family, each with a ``run(...) -> DataFrame`` entry point:
``search`` (matched-quality search and scaling), ``build`` (build time and peak memory, one
subprocess per index), ``training`` (train-step overhead, re-indexing, hardware efficiency) and
``report`` (summary.md and figures). ``data`` makes the embeddings, ``tree`` trains EHI's tree
on frozen vectors. ``trained`` times the indexes a pipeline run trained (``trained_report``
reads its curves, ``trained_costs`` records builds, memory and training jobs, ``trained_growth``
sets several runs against N). Timings are medians of repeated runs; compare ratios taken within one run.
"""
