"""The IVF control of EHI's tree (kind ``ivf-lists``): k-means lists, as many as the tree's leaves,
probed in IVF's order at the tree's beams, with nothing trained and nothing tuned.

The question the control asks is the tree's alone: at equal work, does the learned partition beat
k-means with the same number of lists? So the lists are FAISS-IVF's own (spherical k-means trained
on the corpus with IVF's seed, each document in its nearest centroid's list: the partition
``faiss-ivf`` builds and the floor tree starts from, :func:`ehi.core.ivf.ivf_centroids`), given to the
searcher of :mod:`ehi.search.partition` as a partitioner (:func:`kmeans_lists`). Their count is the
tree's leaf count, which the workflow hands the search rule (``tree_leaves``: rule dev_leaf_count's
choice or B^H, :func:`ehi.search.grids.with_leaf_count_grid`), and the sweep is the tree's beam grid
(``search.ehi_beams``, else :func:`ehi.search.tree_search.beam_grid`): a beam of b leaves and
``nprobe`` = b lists are the same budget point. Work is counted as IVF's (every centroid routed,
the probed lists' documents scored), which for a one-level tree is the tree's own count (B router
rows, the visited leaves' documents; :mod:`ehi.core.work`).

Kind ``ivf-lists-pq`` is the control of ``tree-pq``: the same k-means lists scored by the same codes
(``search.pq_*``: 4-bit fast-scan PQ without residuals, as the tree's leaves are coded, and the best
``pq_rerank`` re-scored exactly), so the two differ in the partition alone.
"""

from __future__ import annotations

import numpy as np

from ehi.core.ivf import IVF_SEED
from ehi.search.base import as_matrix
from ehi.search.partition import PartitionSearcher
from ehi.search.tree_search import beam_grid

PARTITIONER = f"{__name__}:kmeans_lists"


def kmeans_lists(emb: np.ndarray, n_lists: int, seed: int = IVF_SEED) -> tuple[np.ndarray, np.ndarray]:
    """A partitioner (:mod:`ehi.search.partition`): FAISS-IVF's spherical k-means centroids and each
    document's list, its nearest centroid by inner product (IVF's own assignment)."""
    import faiss

    from ehi.core.ivf import ivf_centroids

    emb = as_matrix(emb)
    centroids = ivf_centroids(emb, n_lists, seed)
    quantizer = faiss.IndexFlatIP(emb.shape[1])
    quantizer.add(centroids)
    _, nearest = quantizer.search(emb, 1)
    return nearest[:, 0].astype(np.int64), centroids


class TreeListsSearcher(PartitionSearcher):
    """IVF-Flat over :func:`kmeans_lists`, swept at the tree's beams (``beams``: search.ehi_beams)."""

    name = "ivf-lists"

    scoring = "flat"

    @classmethod
    def build(cls, emb: np.ndarray, nlist: int | None = None, beams=None, seed: int = IVF_SEED,
              **codes) -> "TreeListsSearcher":
        """``codes``: PartitionSearcher's m / nbits / rerank (the PQ control's)."""
        searcher = super().build(emb, PARTITIONER, nlist, cls.scoring, seed=seed, **codes)
        searcher.params["beams"] = sorted(int(b) for b in beams) if beams else None
        return searcher

    def default_sweep(self) -> list[int]:
        return beam_grid(int(self.ivf.nlist), self.params.get("beams"))


class TreeListsPQSearcher(TreeListsSearcher):
    """:class:`TreeListsSearcher` with its lists' documents as PQ codes, the best re-ranked exactly."""

    name = "ivf-lists-pq"
    scoring = "pq"
