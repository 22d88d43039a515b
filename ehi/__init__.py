"""EHI: end-to-end learning of a hierarchical index for dense retrieval.

The package is the method as a library; the Snakemake workflow under ``workflow/`` only calls it.
"""

__version__ = "0.1.0"
