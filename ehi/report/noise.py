"""Where a result is noise, said in one line (``evaluation.noise_notes``).

Three cases mislead a reader of the tables without a word: exact search that barely ranks the judged
documents (every system's difference to another is then noise, and a budgeted search can read
above exact search), a claim's verdict that rests on no significant comparison (OK or FAIL by
a mean difference the paired tests cannot tell from zero), and a run where every claim rests on no
comparison at all (n/a). Each gets a line under its table and a warning in the job's log, which
reaches the console.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ehi.evaluate.roles import is_exact

# nDCG@10 below which exact search is called near chance: a random ranking of 10^3 documents with a
# few relevant ones scores about 0.01, a useful retriever on a BEIR collection 0.2 and more
NEAR_CHANCE = 0.05


def near_chance_note(summary: pd.DataFrame, metric: str = "ndcg@10") -> str | None:
    """A line naming each exhaustive search whose ``metric`` is below NEAR_CHANCE, or None."""
    rows = summary[(summary.metric == metric) & summary.system.map(is_exact)]
    low = rows.groupby("system").value.mean()
    low = low[low < NEAR_CHANCE]
    if low.empty:
        return None
    scores = ", ".join(f"{system} {value:.3f}" for system, value in low.items())
    return (f"Warning: exact search scores {metric} {scores}, near chance (below {NEAR_CHANCE}): the vectors barely "
            "rank the judged documents, and every difference between systems here is noise.")


def no_verdict_note(claims: pd.DataFrame) -> str | None:
    """One line where every claim is n/a (no comparison of the results sets a claim's system against
    its peers), else None."""
    claim_rows = claims[~claims.claim.astype(str).str.contains(":")]
    if len(claim_rows) and (claim_rows.verdict == "n/a").all():
        return ("Warning: every claim is n/a: no comparison in the significance tests sets a claim's system against "
                "its peers (ehi/report/claims.yaml), so this run gives no verdict.")
    return None


def claims_file_note(csv: Path) -> str | None:
    """:func:`no_verdict_note` of a written claims table (``results/tables/<name>_claims.csv``), the
    line that closes ``ehi compare``'s console; None where the file is not there."""
    return no_verdict_note(pd.read_csv(csv, keep_default_na=False)) if csv.is_file() else None  # "n/a" stays a verdict


def claim_noise_notes(claims: pd.DataFrame) -> list[str]:
    """A line where every claim rests on no comparison (:func:`no_verdict_note`), and one for each
    claim whose verdict (OK, OKish, FAIL) rests on no significant comparison."""
    verdicts = claims[claims.verdict.isin(["OK", "OKish", "FAIL"]) & ~claims.claim.str.contains(":")]
    notes = [note] if (note := no_verdict_note(claims)) else []
    for row in verdicts.itertuples():
        if not row.significant_for and not row.significant_against:
            notes.append(f"Warning: claim {row.claim} is {row.verdict} by a difference no paired test tells from "
                         f"noise (0 of {int(row.comparisons)} comparisons significant): read it as no evidence either way.")
    return notes
