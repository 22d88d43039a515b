"""The significance table a reader takes in at a glance, beside the long form kept as CSV.

The long form (``significance.parquet``: one row per pair, metric, budget and test, with both
systems' means, p-values, effect size and interval) is what scripts want; a reader wants to know,
per metric, which comparison went which way at which budget. The compact form has one row per
system pair and metric, one column per budget, each cell the difference of means (A - B) with a
mark where the Holm-adjusted test called it significant.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from ehi.core.io import atomic_path
from ehi.report.figures import html_table
from ehi.report.latex import table_tex

MARK = "*"
MARKED_TEST = "randomization"  # the test the claims are judged with


def _pct(budget: float) -> str:
    return f"{100 * budget:g}%"


def _cell(delta: float, significant: bool) -> str:
    return f"{delta:+.3f}{MARK if significant else ''}"


def significance_wide(sig: pd.DataFrame, test: str = MARKED_TEST) -> pd.DataFrame:
    """metric, A, B and one column per budget: "Δ" of A - B, marked where ``test`` is significant."""
    rows = sig[sig.test == test] if "test" in sig and (sig.test == test).any() else sig
    keys = ["metric", "system_a", "system_b"]
    rows = rows.drop_duplicates([*keys, "budget"])
    budgets = sorted(rows.budget.unique())
    cells = rows.assign(cell=[_cell(d, s) for d, s in zip(rows.delta, rows.significant)],
                        column=rows.budget.map(_pct))
    wide = cells.pivot(index=keys, columns="column", values="cell")
    order = list(dict.fromkeys(zip(rows.metric, rows.system_a, rows.system_b)))  # the tests' own order
    wide = wide.reindex(pd.MultiIndex.from_tuples(order, names=keys))
    wide = wide[[_pct(b) for b in budgets]].reset_index()
    return wide.rename(columns={"system_a": "A", "system_b": "B"})


def no_comparison(systems=None, why: str = "") -> str:
    """What an empty significance table says: no EHI search beside a baseline among ``systems`` (the
    systems run; None: not known), or no test in the table though there was one to make, and ``why``
    where that is known."""
    systems = None if systems is None else sorted(set(systems))
    ehi = [s for s in systems or () if s.startswith("ehi+")]
    if not ehi or len(ehi) == len(systems):  # no EHI search, or no baseline beside it
        return "No comparison: the systems run include no EHI search with a baseline beside it."
    because = why or ("the table was made before these searches had results, or from per-query tables it could not "
                      "compare; make it again (snakemake --forcerun significance)")
    return (f"No comparison could be made: the significance table holds no test, though {', '.join(ehi)} ran beside "
            f"{len(systems) - len(ehi)} other system(s): {because}.")


SCREEN_ROWS = 38  # a section's rows under its header and rule: 40 lines of table on a screen


def _screens(table: pd.DataFrame) -> list[pd.DataFrame]:
    """``table`` in parts of at most SCREEN_ROWS rows, each system A's rows kept together."""
    if len(table) <= SCREEN_ROWS:
        return [table]
    parts, rows = [], []
    for _, group in table.groupby("A", sort=False):
        if rows and sum(map(len, rows)) + len(group) > SCREEN_ROWS:
            parts.append(pd.concat(rows))
            rows = []
        rows.append(group)
    return [*parts, pd.concat(rows)] if rows else parts


def significance_markdown(wide: pd.DataFrame, caption: str, empty: str = "") -> str:
    """One section per metric, so each fits on a screen (a metric with more comparisons than a screen
    holds: one section per screenful, system A's rows together); ``empty``: the sentence of a table
    without tests (:func:`no_comparison`)."""
    parts = [caption, ""] if caption else []
    for metric, table in wide.groupby("metric", sort=False):
        table = table.drop(columns="metric").fillna("–")
        # the cells are text ("+0.012*"): tabulate must not read them back as numbers
        aligns = ["left", "left", *["right"] * (table.shape[1] - 2)]
        screens = _screens(table)
        for i, screen in enumerate(screens):
            heading = f"### {metric}" + (f" ({i + 1} of {len(screens)})" if len(screens) > 1 else "")
            parts += [heading, "", screen.to_markdown(index=False, disable_numparse=True, colalign=aligns), ""]
    if wide.empty:  # e.g. a config without an EHI system: nothing was tested against anything
        parts += [empty or no_comparison(), ""]
    return "\n".join(parts)


def render_significance(sig: pd.DataFrame, stem: str | os.PathLike, caption: str = "", systems=None,
                        why_empty: str = "") -> list[Path]:
    """``stem``.md, .tex and .html: the compact table; ``stem``.csv: the long form, every column.
    ``systems``: the systems run, and ``why_empty`` where known, for what a table without tests says."""
    stem = Path(stem)
    tested = sig.test.iloc[0] if len(sig) and not (sig.test == MARKED_TEST).any() else MARKED_TEST
    caption = (f"{caption}. Each cell: mean of A minus mean of B over the queries at that fraction of "
               f"documents scored; {MARK}: the {tested} test's Holm-adjusted p-value is below alpha; "
               "a dash: not compared. Every test, p-value and interval: the .csv beside this file")
    wide = significance_wide(sig)
    outputs = {".md": significance_markdown(wide, caption, no_comparison(systems, why_empty)),
               ".tex": table_tex(wide, caption, label=f"tab:{stem.name}"),
               ".csv": sig.to_csv(index=False), ".html": html_table(wide, caption)}
    for suffix, text in outputs.items():
        with atomic_path(stem.with_suffix(suffix)) as tmp:
            tmp.write_text(text)
    return [stem.with_suffix(s) for s in outputs]
