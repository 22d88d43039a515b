"""Choosing (H, B) on the dev split with the tree alone on frozen embeddings (ehi/train/tree_shape.py)."""

import numpy as np
import pandas as pd

from ehi.train.tree_shape import choose, compare_shapes, dev_routing, fit_shape_tree, pairs_of, summary_markdown


def clustered(n_docs=400, n_queries=120, dim=16, clusters=16, seed=0):
    """Documents around cluster centres; each query sits near its one positive document."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, dim))
    docs = centres[rng.integers(0, clusters, n_docs)] + 0.3 * rng.standard_normal((n_docs, dim))
    positives = rng.choice(n_docs, n_queries, replace=False)
    queries = docs[positives] + 0.1 * rng.standard_normal((n_queries, dim))
    docs, queries = (x / np.linalg.norm(x, axis=1, keepdims=True) for x in (docs, queries))
    return docs.astype(np.float32), queries.astype(np.float32), positives


def test_pairs_of_reads_only_the_named_split():
    queries = pd.DataFrame({"query_id": ["a", "b", "c"], "text": "", "split": ["train", "dev", "test"]})
    qrels = pd.DataFrame({"query_id": ["a", "b", "c", "b"], "doc_id": ["d1", "d0", "d2", "d2"],
                          "relevance": [1, 1, 1, 0], "split": ["train", "dev", "test", "dev"]})
    assert [a.tolist() for a in pairs_of(queries, qrels, ["d0", "d1", "d2"], "dev")] == [[1], [0]]


def test_dev_routing_respects_the_budget_and_a_trained_tree_routes_better_than_chance():
    docs, queries, positives = clustered()
    train = (np.arange(80), positives[:80])
    dev = (np.arange(80, 120), positives[80:])
    tree = fit_shape_tree(docs, queries, train, height=1, branching=16, steps=60)
    row = dev_routing(tree, docs, queries, dev, fraction=0.2)
    assert row["dev_frac_scored"] <= 0.2 + 1e-9 and row["beam"] >= 1
    assert row["dev_pos_in_beam"] > 0.5  # chance at ~20% of the corpus is about 0.2
    table = compare_shapes(docs, queries, train, dev, [(1, 8), (2, 4)], fraction=0.2, steps=10, seeds=(0, 1))
    assert len(table) == 4 and (table.dev_frac_scored <= 0.2 + 1e-9).all()
    assert choose(table) in {(1, 8), (2, 4)}
    assert "Chosen: height=" in summary_markdown(table, 0.2, choose(table))
