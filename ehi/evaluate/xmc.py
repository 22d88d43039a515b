"""Extreme multi-label classification (XMC): PSP@k, the propensity-scored precision of a ranked list.

XMC as retrieval: labels are the documents (``ehi.data.sources.load_xmc`` puts the label texts in
the corpus), so a search's corpus rows are label indices. Conventions follow the Extreme
Classification Repository (and its reference code, pyxclib), so numbers compare with published ones:

* relevance is binary; a query's labels are a row of a (queries, labels) matrix; a list shorter
  than k counts the gap as misses;
* ``psp@k``: each hit gains its label's inverse propensity 1/p_l (Jain et al., KDD 2016):
  p_l = 1 / (1 + C e^{−A log(N_l + B)}), C = (log N − 1)(B + 1)^A, N_l the label's training
  frequency and N the number of training points; A = 0.6, B = 2.6 for Amazon datasets. The
  repository reports Σ_q PSP_q / Σ_q PSP*_q, where PSP*_q is the best value any ranking could reach
  (its k rarest true labels). To keep per-query values whose *mean* is that number, each query's
  raw PSP is divided by the mean of PSP* over the evaluated queries: a per-query value therefore
  depends on the query set it was computed with.
* queries without true labels count, with 0 (as pyxclib's precision does).

P@k and nDCG@k on binary labels are the metrics registry's ``precision@k`` and ``ndcg@k`` (ranx's
formulas, :mod:`ehi.evaluate.native_scorers`), computed with every other metric: the same
definitions as the repository's.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ehi.data.judgements import relevant

# (A, B) of Jain et al. 2016, as the Extreme Classification Repository uses them
PROPENSITY_AB = {"amazon": (0.6, 2.6), "wikipedia": (0.5, 0.4), "other": (0.55, 1.5)}
DEFAULT_KS = (1, 3, 5)


def inverse_propensity(label_freq: np.ndarray, n_train: int, a: float = 0.6, b: float = 2.6) -> np.ndarray:
    """1/p_l for each label (L,) from its training frequency N_l and the number of training points N."""
    if n_train < 1:
        raise ValueError(f"need at least one training point, got n_train={n_train}")
    c = (np.log(n_train) - 1.0) * (b + 1.0) ** a
    return 1.0 + c * (np.asarray(label_freq, dtype=np.float64) + b) ** (-a)


def label_matrix(qrels: pd.DataFrame, query_ids, label_ids) -> sp.csr_matrix:
    """Binary (queries, labels) CSR matrix of the judgements with relevance > 0.

    Rows follow ``query_ids``, columns ``label_ids`` (the corpus order, so search rows index it);
    judgements of unknown queries or labels are ignored.
    """
    q_pos = pd.Series(np.arange(len(query_ids)), index=pd.Index(np.asarray(query_ids).astype(str)))
    l_pos = pd.Series(np.arange(len(label_ids)), index=pd.Index(np.asarray(label_ids).astype(str)))
    rel = relevant(qrels)
    rows = q_pos.reindex(rel.query_id.astype(str)).to_numpy()
    cols = l_pos.reindex(rel.doc_id.astype(str)).to_numpy()
    keep = ~(np.isnan(rows) | np.isnan(cols))
    data = np.ones(int(keep.sum()), dtype=np.float64)
    mat = sp.csr_matrix((data, (rows[keep].astype(np.int64), cols[keep].astype(np.int64))),
                        shape=(len(query_ids), len(label_ids)))
    mat.data[:] = 1.0  # a duplicated judgement must not count twice
    return mat


def _hits(ranked: np.ndarray, labels: sp.csr_matrix) -> np.ndarray:
    """(nq, K) 1.0 where the ranked label is a true label of the query; -1 padding is a miss."""
    nq, width = ranked.shape
    rows = np.repeat(np.arange(nq), width)
    flat = np.asarray(labels[rows, np.maximum(ranked, 0).ravel()]).ravel()
    return flat.reshape(nq, width) * (ranked >= 0)


def _best_psp(labels: sp.csr_matrix, inv_prop: np.ndarray, k: int) -> np.ndarray:
    """Σ of each query's k largest 1/p_l among its true labels, / k (the best reachable raw PSP@k)."""
    row = np.repeat(np.arange(labels.shape[0]), np.diff(labels.indptr))
    vals = inv_prop[labels.indices]
    order = np.lexsort((-vals, row))  # by row, rarest (largest 1/p) first
    rank = np.arange(len(order)) - labels.indptr[row[order]]
    top = rank < k
    return np.bincount(row[order][top], weights=vals[order][top], minlength=labels.shape[0]) / k


def psp_at_k(ranked: np.ndarray, labels, inv_prop: np.ndarray, ks=DEFAULT_KS) -> dict[str, np.ndarray]:
    """Per-query ``psp@k``, each (nq,), normalised as the repository does (see the module docstring).

    ranked (nq, K) int label indices, best first, -1 padded; labels (nq, L) binary, sparse or dense;
    inv_prop (L,) the labels' inverse propensities.
    """
    ranked = np.asarray(ranked, dtype=np.int64)
    labels = sp.csr_matrix(labels, dtype=np.float64)
    if ranked.shape[0] != labels.shape[0]:
        raise ValueError(f"{ranked.shape[0]} ranked lists for {labels.shape[0]} label rows")
    kmax = max(ks)
    if ranked.shape[1] < kmax:  # a short list: the missing ranks are misses
        ranked = np.pad(ranked, ((0, 0), (0, kmax - ranked.shape[1])), constant_values=-1)
    ranked = ranked[:, :kmax]
    inv_prop = np.asarray(inv_prop, dtype=np.float64)
    gains = _hits(ranked, labels) * inv_prop[np.maximum(ranked, 0)]  # (nq, kmax)
    out: dict[str, np.ndarray] = {}
    for k in ks:
        norm = _best_psp(labels, inv_prop, k).mean()
        raw = gains[:, :k].sum(1) / k
        out[f"psp@{k}"] = raw / norm if norm > 0 else np.zeros_like(raw)
    return out


def train_inverse_propensity(dataset, propensity: str = "amazon") -> np.ndarray:
    """1/p_l per corpus row (label) from the train split's label frequencies (Jain et al. 2016)."""
    label_ids = dataset.corpus.doc_id.astype(str).to_numpy()
    train_q, train_qrels = dataset.split("train")
    if not len(train_q):
        raise ValueError(f"psp@k needs label frequencies, but {dataset.name!r} has no train queries")
    freq = np.asarray(label_matrix(relevant(train_qrels), train_q.query_id, label_ids).sum(0)).ravel()
    return inverse_propensity(freq, len(train_q), *PROPENSITY_AB[propensity])


def psp_scorer(qids: list[str], qrels_df: pd.DataFrame, doc_ids, inv_prop, ks):
    """A function: one search's run rows -> psp@k per query in ``qids`` order (this module's
    conventions); the ``psp`` family of :mod:`ehi.evaluate.metric_registry`. The label matrix and
    id lookups are built once for every search of a run."""
    row_of = pd.Series(np.arange(len(doc_ids)), index=pd.Index(np.asarray(doc_ids).astype(str)))
    q_pos = pd.Series(np.arange(len(qids)), index=qids)
    labels = label_matrix(relevant(qrels_df), qids, row_of.index)
    width = max(ks)

    def score(group: pd.DataFrame) -> dict:
        ranked = np.full((len(qids), width), -1, dtype=np.int64)
        top = group[group["rank"] <= width]
        pos = q_pos.reindex(top.query_id.astype(str))
        keep = pos.notna().to_numpy()
        ranked[pos.to_numpy()[keep].astype(np.int64), top["rank"].to_numpy()[keep] - 1] = \
            row_of.loc[top.doc_id.astype(str)].to_numpy()[keep]
        return psp_at_k(ranked, labels, inv_prop, ks)

    return score
