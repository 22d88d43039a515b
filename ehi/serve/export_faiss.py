"""``ehi export-faiss`` / :func:`ehi.export_faiss`: write a trained EHI index as a FAISS file.

The source is a search-index directory (``ehi search --index DIR``: its ``docs.parquet`` gives the
document ids) or a bare EHIIndex directory (``index.json``), which holds no ids: its export takes
them from ``doc_ids`` (a prepared ``corpus.parquet``, whose ``doc_id`` column is in corpus row
order, or a list), or writes the corpus row numbers when asked to with ``row_ids``. The
output is FILE (``faiss.read_index``, searched with the embeddings' own dimension), FILE.json (doc
ids, what the export cannot express) and, for trees of height >= 2, FILE.router.safetensors (EHI's routing, numpy):
see :mod:`ehi.search.export`. FILE opens at ``nprobe`` = the beam a search index recorded as
meeting its dev budget (:mod:`ehi.search.budget_beam`), the beam asked for, or else ``ehi
search``'s default beam; FILE.json holds that number as ``nprobe`` and where it comes from as
``nprobe_source``.
"""

from __future__ import annotations

import os
from pathlib import Path

from ehi.search.budget_beam import beam_words
from ehi.search.exported import ExportedIndex
from ehi.search.tree_index import EHIIndex
from ehi.serve.api import DEFAULT_BEAM, SearchIndexError, load_index
from ehi.search.query_args import check_beam


def _bare_ids(index: EHIIndex, index_dir: Path, doc_ids, row_ids: bool) -> list[str] | None:
    """The document ids of a bare EHIIndex directory's export: given, read, or the rows on request."""
    n = index.doc_emb.shape[0]
    if doc_ids is None:
        if row_ids:
            return None  # the export's own default: corpus row numbers
        raise SearchIndexError(f"{index_dir}: an EHI index directory holds no document ids; pass doc_ids= (the "
                               "prepared corpus.parquet it was built on, or a list of ids) or row_ids=True to "
                               "export corpus row numbers as ids")
    if isinstance(doc_ids, (str, os.PathLike)):
        import pandas as pd

        path = Path(doc_ids)
        try:
            doc_ids = pd.read_parquet(path, columns=["doc_id"]).doc_id.astype(str).tolist()
        except (OSError, ValueError, KeyError) as err:
            raise SearchIndexError(f"{path}: not a prepared corpus with a doc_id column ({err})") from None
    ids = [str(d) for d in doc_ids]
    if len(ids) != n:
        raise SearchIndexError(f"{index_dir}: {n} documents in the index but {len(ids)} document ids given")
    return ids


def _source(index_dir: Path, doc_ids=None, row_ids: bool = False) -> tuple[EHIIndex, list[str] | None, dict | None]:
    """The index to export, opened with every check ``ehi search`` runs (what search refuses is
    never exported), its document ids and the beam it records as chosen on dev (or None)."""
    if (index_dir / "index.json").exists():  # a bare EHIIndex directory
        index = EHIIndex.load(index_dir)
        return index, _bare_ids(index, index_dir, doc_ids, row_ids), None
    if (index_dir / "index").is_dir() or (index_dir / "docs.parquet").exists():
        served = load_index(index_dir, device="cpu")
        return served.index, served.doc_ids, served.config.get("beam")
    raise SearchIndexError(f"{index_dir}: neither a search index (index/ + docs.parquet) nor an EHI index "
                           "directory (index.json)")


def opening_beam(n_leaves: int, chosen: dict | None, beam=None) -> tuple[int, str]:
    """(the nprobe the export opens at, where it comes from in words)."""
    if beam is not None:
        beam = check_beam(beam, n_leaves)
        return beam, f"beam {beam}: the beam the export was asked for"
    if chosen:
        return check_beam(chosen["beam"], n_leaves), beam_words(chosen)
    beam = min(DEFAULT_BEAM, n_leaves)
    return beam, f"beam {beam}: ehi search's default (this index records no beam chosen on dev)"


def check_options(pq_m: int | None, nbits: int, rerank: int) -> None:
    """The export's options, before anything is read."""
    if pq_m is not None and pq_m < 1:
        raise SearchIndexError(f"pq_m must be a positive divisor of the embedding dimension, got {pq_m}")
    if nbits not in (4, 8):
        raise SearchIndexError(f"nbits must be 4 (fast scan) or 8, got {nbits}")
    if rerank < 0:
        raise SearchIndexError(f"rerank must be 0 (off) or the number of candidates to re-score, got {rerank}")


def check_out(index_dir: Path, out: Path) -> None:
    """An export beside the index, never into it: its files could overwrite the index's own
    (``--out DIR/index/index.faiss`` would replace the index's only copy of its documents with
    PQ codes), and a later save of the index replaces its folder whole."""
    folder, dest = index_dir.resolve(), out.resolve()
    if dest == folder or folder in dest.parents:
        raise SearchIndexError(f"{out}: inside the index folder {index_dir}, whose own files an export there "
                               "could overwrite; write the export outside it")


def export_faiss(index_dir: str | os.PathLike, out: str | os.PathLike, pq_m: int | None = None,
                 nbits: int = 4, rerank: int = 0, doc_ids=None, row_ids: bool = False, beam=None) -> ExportedIndex:
    """Export the EHI index in ``index_dir`` to ``out`` (+ ``out``.json); returns the exported index.

    ``pq_m``: product-quantize the leaves with M sub-quantizers (M must divide the dimension) of
    ``nbits`` bits (4: IndexIVFPQFastScan, 8: IndexIVFPQ); ``rerank`` > 0 re-scores the best
    ``rerank`` candidates exactly (IndexRefineFlat). Height 1 is exact in FAISS; height >= 2 is
    not (see :mod:`ehi.search.export`) and needs the router file written beside. ``doc_ids`` /
    ``row_ids``: the ids of a bare EHIIndex directory's documents (see the module doc). ``beam``:
    the nprobe FILE opens at (default: the beam the search index chose on dev, see the module doc).
    An ``out`` inside ``index_dir`` is refused (:func:`check_out`).
    """
    check_options(pq_m, nbits, rerank)
    index, doc_ids, chosen = _source(Path(index_dir), doc_ids, row_ids)
    check_out(Path(index_dir), Path(out))
    nprobe = opening_beam(index.indexer.n_leaves, chosen, beam)
    exported = ExportedIndex.build(index, doc_ids=doc_ids, pq_m=pq_m, nbits=nbits, rerank=rerank, nprobe=nprobe)
    exported.write(out)
    return exported
