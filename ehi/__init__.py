"""EHI: end-to-end learning of a hierarchical index for dense retrieval.

The package is the method as a library; the Snakemake workflow under ``workflow/`` only calls it.
"""

from ehi.core import __version__  # defined below the front door, so no module climbs back up to it

# the public API: imported on first use, so `import ehi` stays light (no torch/transformers)
__all__ = ["load_index", "fit_tree", "export_faiss", "__version__"]


def __dir__():
    return sorted(set(globals()) | set(__all__))


def __getattr__(name):
    if name == "load_index":
        from ehi.serve.api import load_index

        return load_index
    if name == "fit_tree":
        from ehi.fit import fit_tree

        return fit_tree
    if name == "export_faiss":
        from ehi.serve.export_faiss import export_faiss

        return export_faiss
    raise AttributeError(f"module 'ehi' has no attribute {name!r}")
