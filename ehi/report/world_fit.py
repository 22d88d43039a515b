"""Does the synthetic vector world look like a real collection? Facts measured on both, never a method's result.

Two kinds of fact, each from one dataset's own files:

- **geometry** of its vectors (rule ``geometry``: the untrained encoder's embeddings, the test
  queries): how similar a query is to its nearest document and to its best relevant one, how often
  the nearest document is relevant, how anisotropic the corpus is (the mean cosine of random
  document pairs) and exact search's nDCG@10;
- **the KMR curve's shape** of each partition index and of HNSW (its summary): the share of exact
  search's nDCG@10 each keeps at 1, 2, 5 and 10% of work, and HNSW's lead over the best partition
  index at each budget (positive: the graph is ahead, as on real text).

:func:`world_fit_table` sets the datasets side by side (the rule ``world_fit``), so a world whose
router beats exact search, or whose partitions lead HNSW, shows where a real collection does not.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ehi.core.ranking import at_budget
from ehi.evaluate.roles import is_exact, is_graph, is_tree_lists, routes_over_lists, search_of
from ehi.search.registry import IVF_KIND, TREE_KIND

BUDGETS = (0.01, 0.02, 0.05, 0.1)
PAIRS = 20_000  # random document pairs for the corpus's mean cosine
CHUNK = 512  # queries scored against the corpus at a time


def _unit(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def geometry(doc_emb: np.ndarray, q_emb: np.ndarray, relevant: list[np.ndarray], seed: int = 0) -> dict[str, float]:
    """Geometry facts of a corpus and its judged queries (``relevant[i]``: the relevant document rows
    of query ``i``); cosines of unit-normalised vectors."""
    docs, queries = _unit(doc_emb), _unit(q_emb)
    nearest, best_relevant, top1_relevant = [], [], []
    for start in range(0, len(queries), CHUNK):
        scores = queries[start : start + CHUNK] @ docs.T
        top = scores.argmax(1)
        for i, row in enumerate(scores):
            rel = relevant[start + i]
            nearest.append(row[top[i]])
            best_relevant.append(row[rel].max() if len(rel) else np.nan)
            top1_relevant.append(float(top[i] in set(rel.tolist())))
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, len(docs), PAIRS), rng.integers(0, len(docs), PAIRS)
    keep = a != b
    nearest, best_relevant = np.asarray(nearest), np.asarray(best_relevant)
    return {
        "n_docs": int(len(docs)), "n_queries": int(len(queries)), "dim": int(docs.shape[1]),
        "nearest_cos_p10": float(np.quantile(nearest, 0.1)), "nearest_cos_median": float(np.median(nearest)),
        "nearest_cos_p90": float(np.quantile(nearest, 0.9)),
        "relevant_cos_median": float(np.nanmedian(best_relevant)),
        "relevant_gap_median": float(np.nanmedian(nearest - best_relevant)),
        "top1_relevant": float(np.mean(top1_relevant)),
        "doc_pair_cos_mean": float(np.mean(np.sum(docs[a[keep]] * docs[b[keep]], axis=1))),
    }


def kmr_shape(summary: pd.DataFrame, metric: str = "ndcg@10") -> pd.DataFrame:
    """One row per approximate system of a summary's main variant: its share of exact search's
    ``metric`` at each budget of work (documents where routing was not counted); NaN where it has no
    point that cheap."""
    rows = summary[(summary.metric == metric) & (summary.variant == "main")]
    exhaustive = rows.system.map(is_exact)
    exact = rows[exhaustive]
    if exact.empty:
        raise ValueError("the summary has no exact search to take shares of")
    exact_value = float(exact[exact.system == exact.system.min()].value.iloc[0])
    cost = "frac_work" if "frac_work" in rows and rows.frac_work.notna().any() else "frac_visited"
    out = []
    for system, points in rows[~exhaustive].groupby("system", sort=True):
        shares = {}
        for b in BUDGETS:
            at = at_budget(points[cost].to_numpy(), b)
            shares[f"share@{b:g}"] = float(points.value.iloc[at]) / exact_value if at is not None else np.nan
        out.append({"system": system, "method": search_of(system), **shares})
    table = pd.DataFrame(out)
    table.attrs.update(exact_value=exact_value, cost=cost)
    return table


def hnsw_lead(shape: pd.DataFrame) -> dict[str, float]:
    """HNSW's share minus the best partition index's, per budget (NaN without both)."""
    hnsw = shape[shape.system.map(is_graph).astype(bool)]
    # partitions built on their own: the tree's IVF control (pre+ivf-lists) runs beside some datasets
    # only (not the frozen real collections), so counting it would make rows lead over different peers
    parts = shape[shape.system.map(lambda s: routes_over_lists(s) and not is_tree_lists(s)).astype(bool)]
    return {f"hnsw_lead@{b:g}": float(hnsw[f"share@{b:g}"].max() - parts[f"share@{b:g}"].max())
            if len(hnsw) and len(parts) else np.nan for b in BUDGETS}


def world_fit_table(facts: dict[str, dict], shapes: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Datasets side by side: geometry facts, exact nDCG@10, IVF's and the tree's share of it at
    each budget and HNSW's lead over the best partition index."""
    rows = []
    for name, fact in facts.items():
        shape = shapes[name]
        row = {"dataset": name, **fact, "exact_ndcg@10": shape.attrs.get("exact_value", np.nan)}
        for method in (IVF_KIND, TREE_KIND):
            mine = shape[shape.method == method]
            row.update({f"{method}_share@{b:g}": float(mine[f"share@{b:g}"].max()) if len(mine) else np.nan
                        for b in BUDGETS})
        row.update(hnsw_lead(shape))
        rows.append(row)
    return pd.DataFrame(rows)


def world_fit_markdown(table: pd.DataFrame) -> str:
    """The table as Markdown, with one line on how to read it."""
    show = ["dataset", "n_docs", "exact_ndcg@10", "nearest_cos_median", "relevant_gap_median", "top1_relevant",
            "doc_pair_cos_mean", *[f"{method}_share@{b:g}" for method in (IVF_KIND, TREE_KIND) for b in BUDGETS],
            *[f"hnsw_lead@{b:g}" for b in BUDGETS]]
    return ("Each dataset's vectors (test queries, the untrained encoder) and its KMR curves' shapes: "
            "`*_share@b` is a system's nDCG@10 at b of work over exact search's (above 1: better than exact "
            "search); `hnsw_lead@b` is HNSW's share minus the best partition index's (positive: the graph is ahead); "
            "`relevant_gap_median` is how much closer a query's nearest document is than its best relevant one.\n\n"
            + table[[c for c in show if c in table]].to_markdown(index=False, floatfmt=".3f") + "\n")
