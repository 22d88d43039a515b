"""What a judgement means, in one place: relevance >= 1 is relevant; 0 and negative grades are not.

Qrels grade relevance: 0 = judged and not relevant, 1, 2, ... = more relevant; some collections
also use negative grades (spam, harmful). Everywhere in the pipeline (validation, training pairs
and the exclusion of a query's positives from its negatives, tuning, evaluation, XMC labels) a
judgement counts as relevant exactly when its relevance is at least :data:`MIN_RELEVANT`, and a
query is *judged* (trained on, tuned on, evaluated) exactly when it has at least one relevant
judgement. ranx agrees (its metrics' default ``rel_lvl`` is 1). Judgements below it stay in the
prepared qrels (they are data) but never count; preparation counts them in its log, and refuses
a split without a single relevant judgement (nothing in it could be trained on or scored).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ehi.core.errors import DataError

MIN_RELEVANT = 1


def relevant(qrels: pd.DataFrame) -> pd.DataFrame:
    """The judgements that count as relevant (relevance >= MIN_RELEVANT)."""
    return qrels[np.asarray(qrels.relevance) >= MIN_RELEVANT]


def judged_query_ids(qrels: pd.DataFrame) -> set[str]:
    """Ids of the queries with at least one relevant judgement."""
    return set(relevant(qrels).query_id.astype(str))


def judgement_counts(qrels: pd.DataFrame) -> dict[str, int]:
    """Relevant, zero and negative judgements, and queries judged with no relevant one."""
    rel = np.asarray(qrels.relevance)
    all_queries = set(qrels.query_id.astype(str))
    return {"relevant": int((rel >= MIN_RELEVANT).sum()), "zero": int((rel == 0).sum()),
            "negative": int((rel < 0).sum()),
            "queries_without_relevant": len(all_queries - judged_query_ids(qrels))}


def check_split_judgements(qrels: pd.DataFrame, split: str, where: str) -> list[str]:
    """Refuse a split without one relevant judgement; return its counted warnings (negative
    grades, queries judged without a relevant document)."""
    counts = judgement_counts(qrels)
    if counts["relevant"] == 0:
        raise DataError(f"{where}: split {split!r} has no relevant judgement (relevance >= {MIN_RELEVANT}; found "
                        f"{counts['zero']} with relevance 0 and {counts['negative']} negative): nothing in it could "
                        "be trained on or scored")
    notes = []
    if counts["negative"]:
        notes.append(f"{where}: {counts['negative']} judgement(s) with negative relevance, counted as not relevant")
    if counts["queries_without_relevant"]:
        unjudged = sorted(set(qrels.query_id.astype(str)) - judged_query_ids(qrels))
        notes.append(f"{where}: {len(unjudged)} query(ies) with no relevant judgement (relevance <= 0 only) stay in "
                     f"split {split!r} but are neither trained on nor evaluated, e.g. {', '.join(map(repr, unjudged[:3]))}")
    return notes
