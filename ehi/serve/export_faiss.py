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

import pyarrow.parquet as pq

from ehi.search.exported import ExportedIndex
from ehi.search.tree_index import EHIIndex
from ehi.serve.api import SearchIndexError


def _source(index_dir: Path) -> tuple[EHIIndex, list[str] | None]:
    if (index_dir / "index.json").exists():  # a bare EHIIndex directory
        return EHIIndex.load(index_dir), None
    if (index_dir / "index" / "index.json").exists() and (index_dir / "docs.parquet").exists():
        doc_ids = pq.read_table(index_dir / "docs.parquet", columns=["doc_id"]).column(0).to_pylist()
        return EHIIndex.load(index_dir / "index"), doc_ids
    raise SearchIndexError(f"{index_dir}: neither a search index (index/ + docs.parquet) nor an EHI index "
                           "directory (index.json)")


def export_faiss(index_dir: str | os.PathLike, out: str | os.PathLike, pq_m: int | None = None,
                 nbits: int = 4, rerank: int = 0) -> ExportedIndex:
    """Export the EHI index in ``index_dir`` to ``out`` (+ ``out``.json); returns the exported index.

    ``pq_m``: product-quantize the leaves with M sub-quantizers (M must divide the dimension) of
    ``nbits`` bits (4: IndexIVFPQFastScan, 8: IndexIVFPQ); ``rerank`` > 0 re-scores the best
    ``rerank`` candidates exactly (IndexRefineFlat). Height 1 is exact in FAISS; height >= 2 is
    not (see :mod:`ehi.search.export`) and needs the router file written beside.
    """
    index, doc_ids = _source(Path(index_dir))
    exported = ExportedIndex.build(index, doc_ids=doc_ids, pq_m=pq_m, nbits=nbits, rerank=rerank)
    exported.write(out)
    return exported
