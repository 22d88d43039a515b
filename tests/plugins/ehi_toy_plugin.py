"""A toy extension, registered through the registries alone (tests/workflow/test_plugins.py).

* ANNS kind ``toy-prefix``: exact scores over the first ``budget`` corpus rows only (the budget
  knob ``prefix``): a deliberately naive baseline whose full budget is exact search.
* metric family ``hit``: ``hit@k`` = 1 when any relevant document is in the top k, else 0.

Put this folder on PYTHONPATH and name the module in EHI_PLUGINS (ehi/core/plugins.py).
"""

from __future__ import annotations

import numpy as np

from ehi.evaluate.metric_registry import Metric, register_metric
from ehi.search.base import Searcher, as_matrix, log_grid, pad_results
from ehi.search.registry import AnnKind, register_kind


class PrefixSearcher(Searcher):
    name = "toy-prefix"
    budget_param = "prefix"

    def __init__(self, emb: np.ndarray):
        super().__init__(len(emb), {})
        self.emb = emb

    @classmethod
    def build(cls, emb):
        return cls(as_matrix(emb))

    def search(self, queries, k, budget_value):
        m = max(1, min(int(budget_value), self.n_docs))
        scores = as_matrix(queries) @ self.emb[:m].T  # (nq, m)
        top = np.argsort(-scores, axis=1, kind="stable")[:, :k]
        rows, top_scores = pad_results(top, np.take_along_axis(scores, top, 1), k)
        return rows, top_scores, np.full(len(rows), m, dtype=np.int64)

    def default_sweep(self):
        return log_grid(max(1, self.n_docs // 20), self.n_docs, 5)


def hit_scorer(ctx, ks):
    relevant = ctx.qrels[ctx.qrels.relevance > 0].groupby("query_id").doc_id.apply(set).to_dict()

    def score(group):
        out = {}
        for k in ks:
            top = group[group["rank"] <= k].groupby("query_id").doc_id.apply(set).to_dict()
            out[f"hit@{k}"] = np.array([float(bool(top.get(q, set()) & relevant.get(q, set()))) for q in ctx.qids])
        return out

    return score


register_kind(AnnKind("toy-prefix", f"{__name__}:PrefixSearcher", lambda n_docs, settings: [{}], tuned=False))
register_metric(Metric("hit", hit_scorer))
