"""A synthetic retrieval world in vector space, written in the embeddings layout (docs/embeddings.md).

Documents sit in a hierarchy: topics, subtopics in each, and facets in each subtopic; a facet is a
handful of documents on one point (``mean_relevant`` on average), and a query asks for one facet,
so every document of its facet is relevant to it (grade 1). A vector is the sum of its levels'
offsets (topic, subtopic, facet, its own noise) plus a mean direction every vector shares, mapped
through one fixed anisotropic linear map (a power-law spectrum in a random basis), then unit-
normalised: the shape of sentence-encoder embeddings, whose pairs have a positive mean cosine and
whose variance sits in a few directions. A query is its facet's centre plus query noise and, with
``asymmetry`` > 0, a shift drawn once per topic: queries of a topic then lie off their documents'
region the same way, so routing by document geometry alone misses where queries land, and a router
trained on queries can learn the shift.

Deterministic from ``seed``, and generated facet block by facet block (rows permuted once), so
10^6 x 384 needs the output arrays (memory-mapped) and a few blocks' worth of memory. The corpus
depends on the document knobs only: the query counts change the queries, never the documents.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ehi.core.config import Section
from ehi.core.io import atomic_dir, file_sha256
from ehi.data.embeddings import create_array, write_ids, write_manifest, write_qrels

log = logging.getLogger(__name__)

BLOCK_FACETS = 4096  # facets generated together: a fixed part of the world's definition, not a knob
STREAMS = {"layout": 0, "docs": 1, "queries": 2, "assign": 3}  # independent random streams


@dataclass(frozen=True)
class WorldConfig(Section):
    section = "vector world"

    n_docs: int = 10_000
    dim: int = 384
    n_topics: int = 32
    subtopics_per_topic: int = 16
    mean_relevant: float = 3.0  # documents a facet (a query's relevant set), 1 + Poisson(mean - 1)
    spectrum_decay: float = 0.5  # anisotropy: the map's i-th direction scaled by i ** -decay
    mean_weight: float = 0.5  # the direction every vector shares (its pairs' mean cosine grows with it)
    topic_weight: float = 1.0
    subtopic_weight: float = 0.8
    facet_weight: float = 0.7
    doc_noise: float = 0.5  # a document's own offset from its facet's centre
    query_noise: float = 0.6  # a query's offset from its facet's centre
    asymmetry: float = 0.0  # the length of the per-topic query shift (0: queries as documents)
    n_train: int = 1_000
    n_dev: int = 200
    n_test: int = 1_000
    dtype: str = "float32"
    seed: int = 0

    @property
    def n_queries(self) -> int:
        return self.n_train + self.n_dev + self.n_test


def _rng(cfg: WorldConfig, stream: str, *block: int) -> np.random.Generator:
    return np.random.default_rng([cfg.seed, STREAMS[stream], *block])


class _Geometry:
    """What every block shares: the anisotropic map, the mean direction, topic and subtopic offsets,
    the topics' query shifts and the facet table (each facet's subtopic and size)."""

    def __init__(self, cfg: WorldConfig):
        rng, d = _rng(cfg, "layout"), cfg.dim
        basis, _ = np.linalg.qr(rng.standard_normal((d, d)))
        scale = np.arange(1, d + 1, dtype=np.float64) ** -float(cfg.spectrum_decay)  # an int decay too
        self.map = (basis * (scale / np.sqrt((scale ** 2).mean()))).T  # (d, d): row vector g -> g @ map
        self.mean = self.map_rows(rng.standard_normal((1, d)))[0]
        self.mean /= np.linalg.norm(self.mean) / np.sqrt(d)  # as long as a mapped offset, on average
        self.topics = rng.standard_normal((cfg.n_topics, d))
        self.subtopics = rng.standard_normal((cfg.n_topics * cfg.subtopics_per_topic, d))
        self.shifts = rng.standard_normal((cfg.n_topics, d))
        sizes = 1 + rng.poisson(max(cfg.mean_relevant - 1, 0), size=cfg.n_docs)
        ends = np.cumsum(sizes)
        n_facets = int(np.searchsorted(ends, cfg.n_docs)) + 1
        sizes = sizes[:n_facets]
        sizes[-1] -= ends[n_facets - 1] - cfg.n_docs  # the last facet ends at the n_docs-th document
        self.sizes = sizes
        self.subtopic_of = rng.integers(0, len(self.subtopics), size=n_facets)
        self.doc_row = rng.permutation(cfg.n_docs)  # the k-th document generated is row doc_row[k]
        self.first_doc = np.concatenate([[0], np.cumsum(sizes)[:-1]])

    def map_rows(self, g: np.ndarray) -> np.ndarray:
        return g @ self.map

    def centres(self, cfg: WorldConfig, facets: np.ndarray, facet_noise: np.ndarray) -> np.ndarray:
        """Unmapped centres of ``facets``: topic + subtopic + facet offsets."""
        sub = self.subtopic_of[facets]
        return (cfg.topic_weight * self.topics[sub // cfg.subtopics_per_topic] + cfg.subtopic_weight * self.subtopics[sub]
                + cfg.facet_weight * facet_noise)


def _unit(cfg: WorldConfig, geo: _Geometry, g: np.ndarray) -> np.ndarray:
    x = geo.map_rows(g) + cfg.mean_weight * geo.mean
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(cfg.dtype)


def _assign_queries(cfg: WorldConfig, n_facets: int) -> np.ndarray:
    """Each query's facet: distinct facets while there are enough, else drawn with replacement."""
    rng = _rng(cfg, "assign")
    if cfg.n_queries <= n_facets:
        return rng.choice(n_facets, size=cfg.n_queries, replace=False)
    return rng.integers(0, n_facets, size=cfg.n_queries)


def generate_world(out_dir: str | Path, cfg: WorldConfig) -> dict:
    """Write the world into ``out_dir`` (the embeddings layout); returns its manifest.

    The knobs and the memory and disk the world needs are checked before anything is allocated.
    The world is written aside and moved into place whole: a generator killed or failing at any
    moment leaves the world that was there before (or none), never a mix of two seeds' rows.
    """
    from ehi.data.world_checks import check_world, clear_stale_writes

    out = Path(out_dir)
    check_world(cfg, out)
    clear_stale_writes(out)
    with atomic_dir(out) as tmp:
        return _write_world(tmp, cfg)


def _write_world(out: Path, cfg: WorldConfig) -> dict:
    from ehi.data.world_checks import check_distinct

    start = time.perf_counter()
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    geo = _Geometry(cfg)
    n_facets = len(geo.sizes)
    query_facet = _assign_queries(cfg, n_facets)
    docs = create_array(out / "docs.npy", (cfg.n_docs, cfg.dim), cfg.dtype)
    queries = create_array(out / "queries.npy", (cfg.n_queries, cfg.dim), cfg.dtype)
    for b, lo in enumerate(range(0, n_facets, BLOCK_FACETS)):
        facets = np.arange(lo, min(lo + BLOCK_FACETS, n_facets))
        rng = _rng(cfg, "docs", b)
        facet_noise = rng.standard_normal((len(facets), cfg.dim))
        centres = geo.centres(cfg, facets, facet_noise)  # (F, d)
        sizes = geo.sizes[facets]
        doc_g = np.repeat(centres, sizes, axis=0) + cfg.doc_noise * rng.standard_normal((int(sizes.sum()), cfg.dim))
        first = geo.first_doc[facets[0]]
        doc_rows = _unit(cfg, geo, doc_g)
        check_distinct(cfg, doc_g, doc_rows, b)
        docs[geo.doc_row[first:first + len(doc_g)]] = doc_rows
        asked = np.flatnonzero((query_facet >= facets[0]) & (query_facet <= facets[-1]))
        if len(asked):
            f = query_facet[asked] - facets[0]
            topic = geo.subtopic_of[query_facet[asked]] // cfg.subtopics_per_topic
            q_g = (centres[f] + cfg.asymmetry * geo.shifts[topic]
                   + cfg.query_noise * _rng(cfg, "queries", b).standard_normal((len(asked), cfg.dim)))
            queries[asked] = _unit(cfg, geo, q_g)
    docs.flush()
    queries.flush()
    doc_ids = np.array([f"doc{i}" for i in range(cfg.n_docs)], dtype=object)
    query_ids = [f"q{i}" for i in range(cfg.n_queries)]
    write_ids(out / "doc_ids.txt", doc_ids)
    write_ids(out / "query_ids.txt", query_ids)
    split = np.repeat(["train", "dev", "test"], [cfg.n_train, cfg.n_dev, cfg.n_test])
    per_query = geo.sizes[query_facet]
    first = geo.first_doc[query_facet]
    generated = np.concatenate([np.arange(a, a + n) for a, n in zip(first, per_query)])
    write_qrels(out, pd.DataFrame({"query_id": np.repeat(query_ids, per_query), "doc_id": doc_ids[geo.doc_row[generated]],
                                   "relevance": 1, "split": np.repeat(split, per_query)}))
    # the content hash a tower or an index checks its vectors against (ehi.model.tower_checks)
    sha256 = {name: file_sha256(out / name) for name in ("docs.npy", "queries.npy", "doc_ids.txt", "query_ids.txt")}
    manifest = {"producer": "ehi.data.vector_world", "world": asdict(cfg), "n_facets": n_facets, "sha256": sha256,
                "seconds": round(time.perf_counter() - start, 2)}
    write_manifest(out, manifest)
    log.info("vector world: %d documents, %d queries, %d facets in %.1f s", cfg.n_docs, cfg.n_queries, n_facets,
             manifest["seconds"])
    return manifest


def main(argv=None) -> None:
    import argparse
    import json

    from ehi.core.errors import exit_on_user_error
    from ehi.data.world_checks import world_from_cli

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a WorldConfig knob (JSON value), e.g. --set n_docs=1000000 --set asymmetry=1.0")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    with exit_on_user_error("vector_world"):
        print(json.dumps(generate_world(args.out_dir, world_from_cli(args.set)), indent=2))

if __name__ == "__main__":
    main()
