"""``ehi export-faiss`` / :func:`ehi.export_faiss`: write a trained EHI index as a FAISS file.

The source is a search-index directory (``ehi search --index DIR``: its ``docs.parquet`` gives the
document ids) or a bare EHIIndex directory (``index.json``; ids are then the corpus rows). The
output is FILE (``faiss.read_index``), FILE.json (doc ids, query augmentation, what the export
cannot express) and, for trees of height >= 2, FILE.router.safetensors (EHI's routing, numpy):
see :mod:`ehi.search.export`.
"""

from __future__ import annotations

import os
from pathlib import Path

from ehi.search.exported import ExportedIndex
from ehi.search.tree_index import EHIIndex
from ehi.serve.api import SearchIndexError, load_index


def _source(index_dir: Path) -> tuple[EHIIndex, list[str] | None]:
    """The index to export, opened with every check ``ehi search`` runs: what search refuses is
    never exported."""
    if (index_dir / "index.json").exists():  # a bare EHIIndex directory
        return EHIIndex.load(index_dir), None
    if (index_dir / "index").is_dir() or (index_dir / "docs.parquet").exists():
        served = load_index(index_dir, device="cpu")
        return served.index, served.doc_ids
    raise SearchIndexError(f"{index_dir}: neither a search index (index/ + docs.parquet) nor an EHI index "
                           "directory (index.json)")


def check_options(pq_m: int | None, nbits: int, rerank: int) -> None:
    """The export's options, before anything is read."""
    if pq_m is not None and pq_m < 1:
        raise SearchIndexError(f"--pq M must be a positive divisor of the embedding dimension, got {pq_m}")
    if nbits not in (4, 8):
        raise SearchIndexError(f"--nbits must be 4 (fast scan) or 8, got {nbits}")
    if rerank < 0:
        raise SearchIndexError(f"--rerank must be 0 (off) or the number of candidates to re-score, got {rerank}")


def export_faiss(index_dir: str | os.PathLike, out: str | os.PathLike, pq_m: int | None = None,
                 nbits: int = 4, rerank: int = 0) -> ExportedIndex:
    """Export the EHI index in ``index_dir`` to ``out`` (+ ``out``.json); returns the exported index.

    ``pq_m``: product-quantize the leaves with M sub-quantizers (M must divide the dimension) of
    ``nbits`` bits (4: IndexIVFPQFastScan, 8: IndexIVFPQ); ``rerank`` > 0 re-scores the best
    ``rerank`` candidates exactly (IndexRefineFlat). Height 1 is exact in FAISS; height >= 2 is
    not (see :mod:`ehi.search.export`) and needs the router file written beside.
    """
    check_options(pq_m, nbits, rerank)
    index, doc_ids = _source(Path(index_dir))
    exported = ExportedIndex.build(index, doc_ids=doc_ids, pq_m=pq_m, nbits=nbits, rerank=rerank)
    exported.write(out)
    return exported
