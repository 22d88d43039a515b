"""The answer of ``ehi compare`` in one paragraph: does a learned partition pay on these vectors?

Read from the run's own files, never typed: the significance table (``results/<name>/significance.parquet``:
each tree against each peer at each target budget, the seed means and the paired test, Holm-adjusted)
and, where ``ehi compare --time`` ran rule ``trained_benchmark``, its ratios at equal quality
(``results/benchmarks/trained_<name>/trained_matched.parquet``). The paragraph gives the better
tree against k-means IVF with as many lists (``de+ivf-lists`` where a DE was trained, else
``pre+ivf-lists``) and against the best peer at
each budget of 1, 2, 5 and 10% of work (nDCG@10, significant or not), the QPS ratios at equal
nDCG@10, and which index to use; a loss is said as plainly as a win. It closes the console and
opens ``OUT/report.md`` (with an HTML twin).
"""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from ehi.core.io import read_table
from ehi.evaluate.roles import DE, encoder_of, is_compressed, is_tree, is_tree_lists

METRIC = "ndcg@10"
BUDGETS = (0.01, 0.02, 0.05, 0.1)
TEST = "randomization"  # the paired test the claims read (ehi/report/claims.yaml)


def tree_rows(sig: pd.DataFrame, test: str = TEST) -> pd.DataFrame:
    """Each tree against each peer (a search that is no tree) on nDCG@10 at the paragraph's budgets,
    with ``evidence``: significant after Holm and, over seeds, outside the seed spread."""
    rows = sig[(sig.metric == METRIC) & (sig.test == test) & sig.budget.round(6).isin(BUDGETS)]
    # astype(bool): over no rows, map gives an empty column of strings, which & refuses
    trees = rows.system_a.map(is_tree).astype(bool) & ~rows.system_b.map(is_tree).astype(bool)
    rows = rows[trees].copy()
    evidence = rows.significant.astype(bool)
    if "within_seed_spread" in rows:
        evidence &= ~rows.within_seed_spread.fillna(False).astype(bool)
    return rows.assign(evidence=evidence)


def best_tree(rows: pd.DataFrame) -> str:
    """The tree with the highest mean nDCG@10 over the budgets it was compared at."""
    means = rows.drop_duplicates(["system_a", "budget"]).groupby("system_a").mean_a.mean()
    return str(means.idxmax())


def _cell(row, peer: bool = False) -> str:
    """``0.412 vs 0.380 (+0.032, significant)`` from one comparison row (the peer named if ``peer``)."""
    said = "significant" if row.evidence else "not significant"
    return f"{row.mean_a:.3f} vs {f'{row.system_b} ' if peer else ''}{row.mean_b:.3f} ({row.delta:+.3f}, {said})"


def _at(budget: float) -> str:
    return f"{budget:.0%}"


def lists_control(rows: pd.DataFrame) -> str | None:
    """The k-means IVF with as many lists as the tree has leaves (flat) that a tree's rows are
    compared with: on DE's vectors where a DE was trained (the two-stage trees' own partition
    control), else on the vectors as given."""
    controls = sorted({s for s in rows.system_b if is_tree_lists(s) and not is_compressed(s)},
                      key=lambda s: encoder_of(s) != DE)
    return controls[0] if controls else None


def against_lists(rows: pd.DataFrame) -> str:
    control = lists_control(rows)
    if control is None:
        return "k-means IVF with as many lists as the tree has leaves is not in this run"
    lists = rows[rows.system_b == control].sort_values("budget")
    cells = "; ".join(f"{_at(r.budget)} {_cell(r)}" for r in lists.itertuples())
    return f"against k-means IVF with as many lists ({control}) it scores, at {cells}"


def best_peers(rows: pd.DataFrame) -> pd.DataFrame:
    """At each budget, the comparison with the peer of the highest nDCG@10 there."""
    return rows.loc[rows.groupby("budget").mean_b.idxmax()].sort_values("budget")


def against_best(rows: pd.DataFrame) -> str:
    cells = "; ".join(f"{_at(r.budget)} {_cell(r, peer=True)}" for r in best_peers(rows).itertuples())
    return f"against the best peer at each budget, {cells}"


def timed(matched: Path, tree: str) -> str:
    """The QPS ratios at equal nDCG@10 of the timed benchmark, or where to get them."""
    if not matched.is_file():
        return "QPS at equal nDCG@10: not timed (ehi compare --time)"
    rows = pd.read_parquet(matched)
    rows = rows[rows.metric == METRIC]
    mine = rows[rows.ehi == tree] if (rows.ehi == tree).any() else rows
    if mine.empty:
        return f"QPS at equal nDCG@10: the timed benchmark ({matched}) holds no nDCG@10 point"
    parts = []
    for (ehi, peer), pair in mine.sort_values("target_share").groupby(["ehi", "peer"], sort=True):
        ratios = "/".join(f"{r:.2f}" for r in pair.qps_ratio)
        shares = "/".join(f"{s:.0%}" for s in pair.target_share)
        parts.append(f"{ehi} {ratios}x {peer} (at {shares} of the pair's best)")
    return "QPS at equal nDCG@10 (one thread): " + "; ".join(parts)


def advice(rows: pd.DataFrame, tree: str) -> str:
    """Which index to use: the tree where it wins with evidence and never loses with it, a peer
    where it loses so, and no learned partition where no difference is evidence."""
    best = best_peers(rows)
    wins, losses = best[best.evidence & (best.delta > 0)], best[best.evidence & (best.delta < 0)]
    control = lists_control(rows)
    lists = rows[rows.system_b == control]
    lists_wins = lists[lists.evidence & (lists.delta > 0)]
    top = best.loc[best.mean_b.idxmax()].system_b  # the best peer where most work is allowed
    if len(losses) and not len(wins):
        return (f"The learned partition loses here: use {', '.join(sorted(set(losses.system_b)))}, which is "
                f"significantly ahead of {tree} at {', '.join(_at(b) for b in losses.budget)} of work.")
    if len(wins) and not len(losses):
        return f"The learned partition pays here: use {tree}, significantly ahead of the best peer at " \
               f"{', '.join(_at(b) for b in wins.budget)} of work."
    if len(wins):
        return (f"Neither wins everywhere: use {tree} at {', '.join(_at(b) for b in wins.budget)} of work and "
                f"{', '.join(sorted(set(losses.system_b)))} at {', '.join(_at(b) for b in losses.budget)}.")
    beat_lists = f" (it does beat {control} significantly at {', '.join(_at(b) for b in lists_wins.budget)})" \
        if len(lists_wins) else ""
    return (f"No difference from the best peer is significant{beat_lists}: a learned partition does not pay "
            f"on these vectors; use {top}, which needs no training.")


def paragraph(sig: pd.DataFrame, matched: Path, name: str) -> str:
    """The answer on ``name``'s vectors from its significance table and timed benchmark."""
    rows = tree_rows(sig)
    if rows.empty:
        return (f"On {name}: no learned partition was tested against a peer at 1-10% of work (no tree against "
                "another search in the significance table), so this run gives no answer.")
    tree = best_tree(rows)
    mine = rows[rows.system_a == tree]
    n = int(mine.n_queries.max())
    seeds = f", seed means over {int(mine.n_seeds_a.max())} seeds" if "n_seeds_a" in mine and mine.n_seeds_a.notna().any() else ""
    missing = [_at(b) for b in BUDGETS if not (mine.budget.round(6) == b).any()]
    unreached = f" (no point of it at {', '.join(missing)} of work)" if missing else ""
    return (f"On {name} ({n} test queries{seeds}; nDCG@10 at 1, 2, 5 and 10% of work, paired {TEST} test, "
            f"Holm-adjusted), the better learned partition is {tree}{unreached}: {against_lists(mine)}; "
            f"{against_best(mine)}. {timed(matched, tree)}. {advice(mine, tree)}")


def answer(workdir: Path, name: str) -> str | None:
    """The paragraph of a finished run in ``workdir``, or None where it wrote no significance table."""
    path = workdir / "results" / name / "significance.parquet"
    if not path.is_file():
        return None
    matched = workdir / "results" / "benchmarks" / f"trained_{name}" / "trained_matched.parquet"
    return paragraph(read_table(path), matched, name)


def write_report(workdir: Path, name: str, text: str, where: dict[str, str]) -> Path:
    """``OUT/report.md``: the answer on top, then where each table is; and its HTML twin."""
    lines = [f"# {name}: does a learned partition pay on these vectors?", "", text, "",
             *[f"- {what}: `{path}`" for what, path in where.items()]]
    report = workdir / "report.md"
    report.write_text("\n".join(lines) + "\n")
    items = "".join(f"<li>{html.escape(what)}: <code>{html.escape(path)}</code></li>" for what, path in where.items())
    report.with_suffix(".html").write_text(f"<h1>{html.escape(lines[0][2:])}</h1><p>{html.escape(text)}</p>"
                                           f"<ul>{items}</ul>\n")
    return report


def closing_lines(workdir: Path, name: str, where: dict[str, str]) -> list[str]:
    """What ends ``ehi compare``'s console: the line where every claim is n/a, then where the report
    is and the answer (``OUT/report.md`` written here)."""
    from ehi.report.noise import claims_file_note

    note = claims_file_note(workdir / "results" / "tables" / f"{name}_claims.csv")
    text = answer(workdir, name)
    lines = [note] if note else []
    if text:
        report = write_report(workdir, name, text, where)
        lines += [f"{'report:':<12} {report}", text]
    return lines
