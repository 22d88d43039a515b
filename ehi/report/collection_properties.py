"""What a user can measure of a collection before training anything: facts of its pretrained vectors.

Rule ``collection_properties`` (workflow/rules/evaluate.smk) measures, on the **dev** split's
judged queries (what a user has before any choice is read on test) and the untrained encoder's
vectors (a world's own vectors), into ``results/<dataset>/properties.json``:

- ``exact_ndcg@10``, ``exact_recall@10``: exact search's nDCG@10, and the share of a query's relevant
  documents among its exact top 10 (how well the vectors alone already answer);
- ``kmeans_unexplained``: the k-means lists' within-list variance over the total variance of the
  unit document vectors (0: documents sit on their centroids; 1: the lists explain nothing);
- ``doc_neighbour_in_list``: the share of documents whose nearest other document is in their own
  k-means list (how well the lists keep document neighbourhoods together);
- ``query_top1_in_list``: the share of queries whose exact nearest document is in the list of the
  query's nearest centroid, and ``relevant_in_list`` the share of a query's relevant documents there
  (how well the lists, built from documents alone, serve the queries: what a learned router can fix);
- ``near_duplicate``: the share of documents with another document above cosine 0.95.

The k-means lists are the control's own (:func:`ehi.search.ivf_lists.kmeans_lists`, as many lists as
the tree's leaves). Document facts are read on a seeded sample of at most ``SAMPLE`` documents
against the whole corpus. :mod:`ehi.report.gain_properties` sets them beside the gain.
"""

from __future__ import annotations

import numpy as np

from ehi.core.ranking import ranked_rows_metrics
from ehi.report.world_fit import CHUNK, _unit

SAMPLE = 10_000  # documents probed for the document facts
NEAR_DUPLICATE_COS = 0.95
TOP = 10


def _top_rows(probes: np.ndarray, docs: np.ndarray, k: int, exclude: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Each probe's ``k`` best documents by inner product, best first (rows, scores); a probe's own
    row (``exclude[i]``) left out."""
    rows, scores = [], []
    for start in range(0, len(probes), CHUNK):
        s = probes[start : start + CHUNK] @ docs.T
        if exclude is not None:
            s[np.arange(len(s)), exclude[start : start + CHUNK]] = -np.inf
        top = np.argpartition(-s, k - 1, axis=1)[:, :k]
        top_scores = np.take_along_axis(s, top, axis=1)
        order = np.argsort(-top_scores, axis=1, kind="stable")
        rows.append(np.take_along_axis(top, order, axis=1))
        scores.append(np.take_along_axis(top_scores, order, axis=1))
    return np.concatenate(rows), np.concatenate(scores)


def unexplained_variance(docs: np.ndarray, lists: np.ndarray) -> float:
    """Within-list sum of squares over the total sum of squares (of ``docs`` about their mean)."""
    total = float(((docs - docs.mean(0)) ** 2).sum())
    counts = np.bincount(lists).astype(np.float64)
    sums = np.zeros((len(counts), docs.shape[1]))
    np.add.at(sums, lists, docs)
    # within = sum ||x||^2 - sum_l ||sum_l||^2 / n_l
    within = float((docs.astype(np.float64) ** 2).sum() - ((sums ** 2).sum(1)[counts > 0] / counts[counts > 0]).sum())
    return within / total if total > 0 else float("nan")


def collection_properties(doc_emb: np.ndarray, q_emb: np.ndarray, relevant: list[dict], n_lists: int,
                          seed: int = 0) -> dict:
    """The facts of the module docstring. ``relevant[i]``: query ``i``'s ``{document row: grade}``."""
    from ehi.search.ivf_lists import kmeans_lists

    docs, queries = _unit(doc_emb), _unit(q_emb)
    lists, centroids = kmeans_lists(docs, n_lists)
    ranked, _ = _top_rows(queries, docs, TOP)
    exact = ranked_rows_metrics(ranked, relevant, ("ndcg@10", "recall@10"))
    query_list = (queries @ centroids.T).argmax(1)
    judged = [i for i, r in enumerate(relevant) if r]
    in_list = [np.mean([lists[d] == query_list[i] for d in relevant[i]]) for i in judged]

    rng = np.random.default_rng(seed)
    probe = np.sort(rng.choice(len(docs), min(SAMPLE, len(docs)), replace=False))
    neighbour, cos = _top_rows(docs[probe], docs, 1, exclude=probe)
    return {
        "split": "dev", "n_docs": int(len(docs)), "n_queries": len(judged), "n_lists": int(n_lists),
        "docs_probed": int(len(probe)),
        "exact_ndcg@10": exact["ndcg@10"], "exact_recall@10": exact["recall@10"],
        "kmeans_unexplained": unexplained_variance(docs, lists),
        "doc_neighbour_in_list": float(np.mean(lists[neighbour[:, 0]] == lists[probe])),
        "query_top1_in_list": float(np.mean(lists[ranked[judged, 0]] == query_list[judged])),
        "relevant_in_list": float(np.mean(in_list)),
        "near_duplicate": float(np.mean(cos[:, 0] > NEAR_DUPLICATE_COS)),
    }
