"""A search index people can use: one directory holding everything a query needs.

Layout of a search-index directory (written atomically by :func:`save_search_index`)::

    DIR/config.json     format version, encoder settings, the training config, the dev-chosen beam
    DIR/docs.parquet    doc_id, title of every document, in corpus order (= index rows)
    DIR/encoder/        the query encoder, a Hugging Face folder (``Encoder.save``)
    DIR/index/          the EHIIndex: leaf-sorted document embeddings + the tree (``EHIIndex.save``)

Python::

    from ehi.serve.api import load_index
    hits = load_index("resources/scifact/search_index").search(["what causes fever?"], beam=4, k=10)
    for doc_id, title, score in hits[0]: ...

``DIR/encoder/`` is a vector tower's folder (``tower.json``) where the dataset was precomputed
vectors; such an index searches query vectors, ``search(np.load("queries.npy"))``.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ehi.core import __version__
from ehi.model.encoder import Encoder, load_encoder
from ehi.model.tree_stats import gini
from ehi.search.tree_index import EHIIndex
from ehi.serve.index_checks import check_encoder_dir, read_docs, read_index_config
from ehi.search.query_args import check_beam, check_k, check_query_matrix, check_query_rows
from ehi.core.errors import SearchIndexError
from ehi.core.io import atomic_dir

FORMAT_VERSION = 1
DEFAULT_BEAM = 4
SNIPPET_CHARS = 100  # a document without a title is shown by the start of its text


class Hit(NamedTuple):
    doc_id: str
    title: str
    score: float


def _display_titles(corpus: pd.DataFrame) -> list[str]:
    # MS MARCO passages and XMC labels have no title: their text is what a reader needs to see
    titles = corpus.title.fillna("").astype(str).str.strip()
    texts = corpus.text.fillna("").astype(str).str.strip().str.slice(0, SNIPPET_CHARS)
    return titles.where(titles != "", texts).tolist()


def save_search_index(out_dir: str | os.PathLike, index: EHIIndex, encoder: Encoder | str | os.PathLike,
                      corpus: pd.DataFrame, train_config: dict | None = None,
                      max_length: int | None = None, beam: dict | None = None) -> Path:
    """Write a search-index directory (see the module docstring).

    ``encoder`` is an :class:`Encoder` or the folder of a saved one (a training run's
    ``encoder/``); ``corpus`` (doc_id, title, text) is in the row order the index was built from.
    ``max_length`` defaults to the encoder's own, else to ``train_config["max_length"]``. ``beam``:
    the beam chosen on dev (:func:`ehi.search.budget_beam.beam_at_budget`), which the FAISS export
    opens at.
    """
    if len(corpus) != index.n_docs:
        raise ValueError(f"corpus has {len(corpus)} documents but the index holds {index.n_docs}")
    train_config = dict(train_config or {})
    if isinstance(encoder, Encoder):
        max_length = max_length or encoder.max_length
        name = encoder.name
    else:
        max_length = max_length or int(train_config.get("max_length", 128))
        name = str(encoder)
    with atomic_dir(out_dir) as tmp:
        index.save(tmp / "index")
        if isinstance(encoder, Encoder):
            encoder.save(tmp / "encoder")
        else:
            shutil.copytree(encoder, tmp / "encoder")
        docs = pa.table({"doc_id": pa.array(corpus.doc_id.astype(str).tolist(), pa.string()),
                         "title": pa.array(_display_titles(corpus), pa.string())})
        pq.write_table(docs, tmp / "docs.parquet")
        config = {"format_version": FORMAT_VERSION, "ehi_version": __version__, "n_docs": index.n_docs,
                  "encoder": {"source": name, "max_length": int(max_length)}, "train_config": train_config}
        if beam is not None:
            config["beam"] = beam
        (tmp / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True, default=str) + "\n")
    return Path(out_dir)


class SearchIndex:
    """An encoder + an EHIIndex + document ids and titles: text in, ranked documents out."""

    def __init__(self, index: EHIIndex, doc_ids: list[str], titles: list[str], config: dict,
                 encoder: Encoder | str | os.PathLike | None, device: str | None = "auto"):
        self.index, self.doc_ids, self.titles, self.config = index, doc_ids, titles, config
        self._encoder, self.device = encoder, device

    @property
    def encoder(self) -> Encoder:
        # loaded on first use: `ehi info` never needs the (possibly large) model
        if self._encoder is None:
            raise SearchIndexError("this index has no encoder (a tree fitted on vectors, ehi.fit_tree): search it with "
                                   "query vectors, an (n, dim) array (ehi search --query-vectors FILE)")
        if isinstance(self._encoder, (str, os.PathLike)):  # a folder: a text encoder's, or a vector tower's
            max_length = self.config["encoder"]["max_length"]
            self._encoder = load_encoder(str(self._encoder), max_length=max_length, device=self.device)
        return self._encoder

    @property
    def n_leaves(self) -> int:
        return self.index.indexer.n_leaves

    def check_beam(self, beam: int | None) -> int:
        """The beam to use: ``DEFAULT_BEAM`` (capped at the leaf count) when None; else 1..leaves."""
        if beam is None:
            return min(DEFAULT_BEAM, self.n_leaves)
        return check_beam(beam, self.n_leaves)

    @property
    def searches_vectors(self) -> bool:
        """Its encoder is a vector tower (a vectors dataset's index): it reads query vectors, no text."""
        encoder = self._encoder
        return (Path(encoder, "tower.json").is_file() if isinstance(encoder, (str, os.PathLike))
                else getattr(encoder, "precomputed", False))  # a text encoder is never loaded for this

    def check_query_vectors(self, vectors) -> None:
        """The whole array's shape and dtype, read without its rows (a memory-mapped file stays on disk)."""
        check_query_matrix(vectors, self.index.indexer.dim)

    def query_embeddings(self, vectors: np.ndarray) -> np.ndarray:
        """Query vectors encoded elsewhere, as the index searches them: through a vector tower's
        query side (then unit-normalised), or as given for a text encoder (its output)."""
        vectors = np.asarray(vectors)
        self.check_query_vectors(vectors)
        check_query_rows(vectors)
        if self.searches_vectors:
            return self.encoder.encode_vectors(vectors, query=True)
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def search_arrays(self, texts: list[str] | np.ndarray, beam: int | None = None, k: int = 10,
                      batch_size: int = 64) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Encode ``texts`` (or take query vectors, :meth:`query_embeddings`) and search: rows
        (nq, k) corpus positions (-1 padded), scores, n_scored."""
        beam = self.check_beam(beam)
        k = check_k(k, self.index.n_docs)
        if isinstance(texts, np.ndarray):
            query_emb = self.query_embeddings(texts)
        elif self.searches_vectors:
            raise SearchIndexError("this index is a vectors dataset's: it searches query vectors, not text "
                                   "(ehi search --query-vectors FILE.npy; from Python an (n, dim) array)")
        else:
            query_emb = self.encoder.encode(list(texts), batch_size=batch_size)  # (nq, d)
        check_query_rows(query_emb, "query embedding")  # what the encoder or the tower made of them
        return self.index.search(query_emb, beam=beam, k=k)  # and the checks of every search of the tree

    def search(self, texts: list[str] | np.ndarray, beam: int | None = None, k: int = 10,
               batch_size: int = 64) -> list[list[Hit]]:
        """Top-k (doc_id, title, score) of each query text, best first; fewer than k when the
        visited leaves hold fewer documents. ``texts`` may be an (n, d) array of query vectors
        encoded elsewhere (a vectors dataset's index needs no encoder: :meth:`query_embeddings`)."""
        rows, scores, _ = self.search_arrays(texts, beam, k, batch_size)
        return [[Hit(self.doc_ids[r], self.titles[r], float(s)) for r, s in zip(row, score) if r >= 0]
                for row, score in zip(rows, scores)]

    def info(self) -> dict:
        """Tree shape, leaf balance, corpus size, encoder and training config."""
        sizes = self.index.leaf_sizes
        tree = self.index.indexer.config()
        return {
            "tree": {"height": tree["height"], "branching": tree["branching"], "n_leaves": self.n_leaves,
                     "dim": tree["dim"], "path_layout": tree["path_layout"]},
            "n_docs": self.index.n_docs,
            "leaf_sizes": {"min": int(sizes.min()), "median": float(np.median(sizes)), "max": int(sizes.max()),
                           "mean": float(sizes.mean()), "gini": gini(sizes), "empty": int((sizes == 0).sum())},
            # a vector tower reads no tokens: its max_length is no setting of the index
            "encoder": ({"source": self.config["encoder"].get("source"), "vectors": True} if self.searches_vectors
                        else self.config.get("encoder", {})),
            "train_config": self.config.get("train_config", {}),
        }


def load_index(in_dir: str | os.PathLike, device: str | None = "auto") -> SearchIndex:
    """Open a directory written by :func:`save_search_index`, or a bare tree index
    (``EHIIndex.save``, as after :func:`ehi.fit_tree`: document ids are its rows, and it searches
    query vectors only). The encoder is loaded at the first
    search and runs on ``device`` (``auto`` = CUDA when present); the index searches on the CPU.
    Everything but the model weights is checked here (:mod:`ehi.serve.index_checks`), so a broken
    directory fails on opening, for ``ehi info`` as for a search, with a :class:`SearchIndexError`."""
    src = Path(in_dir)
    if not src.is_dir():
        raise SearchIndexError(f"no search index at {src}: directory not found")
    if (src / "index.json").is_file():  # a bare EHIIndex (EHIIndex.save, ehi.fit_tree): rows as ids, no encoder
        index = EHIIndex.load(src)
        rows = [str(row) for row in range(index.n_docs)]
        return SearchIndex(index, rows, [""] * index.n_docs, {"encoder": {}}, None, device)
    missing = [p for p in ("config.json", "docs.parquet", "encoder", "index") if not (src / p).exists()]
    if missing:
        raise SearchIndexError(f"{src} is not a search index: missing {', '.join(missing)} "
                          "(write one with ehi.serve.api.save_search_index)")
    config = read_index_config(src / "config.json", FORMAT_VERSION)
    index = EHIIndex.load(src / "index")
    docs = read_docs(src / "docs.parquet", index.n_docs)
    check_encoder_dir(src / "encoder", index.indexer.dim)
    return SearchIndex(index, docs.doc_id.tolist(), docs.title.tolist(), config, src / "encoder", device)
