"""The Parquet data contracts (docs/results_files.md explains each column): one Arrow schema per kind of table.

Every table the project writes goes through :func:`ehi.core.io.write_table`, which casts to the schema
named here, so a column with the wrong name or type fails at the writer, not three rules later.
"""

from __future__ import annotations

import pyarrow as pa

SPLITS = ("train", "dev", "test")  # the values of the queries' and qrels' split column

_RUN_BUDGET = [
    ("system", pa.string()),
    ("variant", pa.string()),
    ("budget_param", pa.string()),
    ("budget_value", pa.float64()),
]

SCHEMAS: dict[str, pa.Schema] = {
    "corpus": pa.schema([("doc_id", pa.string()), ("title", pa.string()), ("text", pa.string())]),
    "queries": pa.schema([("query_id", pa.string()), ("text", pa.string()), ("split", pa.string())]),
    "qrels": pa.schema(
        [
            ("query_id", pa.string()),
            ("doc_id", pa.string()),
            ("relevance", pa.int32()),
            ("split", pa.string()),
        ]
    ),
    "run": pa.schema(
        [
            ("query_id", pa.string()),
            ("doc_id", pa.string()),
            ("rank", pa.int32()),
            ("score", pa.float32()),
            *_RUN_BUDGET,
            # documents this query scored; frac_visited = n_scored / corpus size
            ("n_scored", pa.int64()),
            # centroids or router rows it scored first (ehi.core.work); frac_work = (n_scored + n_routed) / N
            ("n_routed", pa.int64()),
        ]
    ),
    "per_query": pa.schema(
        [
            ("dataset", pa.string()),
            *_RUN_BUDGET,
            ("frac_visited", pa.float64()),
            ("frac_work", pa.float64()),
            ("query_id", pa.string()),
            ("metric", pa.string()),
            ("value", pa.float64()),
        ]
    ),
    "summary": pa.schema(
        [
            ("dataset", pa.string()),
            *_RUN_BUDGET,
            ("frac_visited", pa.float64()),
            ("frac_work", pa.float64()),
            ("metric", pa.string()),
            ("value", pa.float64()),
        ]
    ),
    "significance": pa.schema(
        [
            ("dataset", pa.string()),
            ("metric", pa.string()),
            ("budget", pa.float64()),
            ("system_a", pa.string()),
            ("system_b", pa.string()),
            ("mean_a", pa.float64()),
            ("mean_b", pa.float64()),
            ("delta", pa.float64()),
            ("test", pa.string()),
            ("p_value", pa.float64()),
            ("p_adjusted", pa.float64()),
            ("significant", pa.bool_()),
        ]
    ),
    "timings": pa.schema(
        [
            ("dataset", pa.string()),
            ("system", pa.string()),
            ("stage", pa.string()),
            ("seconds", pa.float64()),
            ("items", pa.int64()),
            ("threads", pa.int32()),
            ("device", pa.string()),
        ]
    ),
    # throughput of one search (one point of a sweep), merged into the summary
    "qps": pa.schema(
        [
            *_RUN_BUDGET,
            ("qps", pa.float64()),
            ("seconds", pa.float64()),
            ("items", pa.int64()),
            ("batch_size", pa.int32()),
            ("threads", pa.int32()),
        ]
    ),
    # one row per leaf of a trained EHI tree (leaf balance tables and histograms)
    "leaves": pa.schema(
        [("dataset", pa.string()), ("variant", pa.string()), ("leaf", pa.int64()), ("size", pa.int64())]
    ),
}

# Tables whose rows a key names once each, with the measured column that must be a number: a
# repeated key would be averaged or shown twice, a NaN would render as the mark of a budget not
# reached. (kind: (key columns, value column))
KEYED = {
    "summary": (("dataset", "system", "variant", "budget_param", "budget_value", "metric"), "value"),
}

# Columns a table may lack (a search that counted no routing, search.budget_cost documents): the
# writer leaves out one nothing filled and the reader fills a missing one with nulls, so a table
# without it is the file it always was and still reads and renders.
OPTIONAL = {"run": ("n_routed",), "per_query": ("frac_work",), "summary": ("frac_work",)}


def schema(kind: str) -> pa.Schema:
    """The Arrow schema of one kind of table (``corpus``, ``queries``, ``qrels``, ``run``, ...)."""
    try:
        return SCHEMAS[kind]
    except KeyError:
        raise KeyError(f"unknown table kind {kind!r}; known kinds: {sorted(SCHEMAS)}") from None
