"""The trees together against each peer: at each target the fastest point of any tree (flat or
with PQ leaves), as ann-benchmarks draws one algorithm over its builds. The ratio tables of
:mod:`benchmarks.trained_report` pair flat trees with float peers and PQ trees with compressed
ones; "is the best tree at least as fast as every peer at equal quality?" asks this table instead,
since a PQ tree may be the fastest tree where a float peer is the one to beat."""

from __future__ import annotations

import pandas as pd

from benchmarks.trained_report import (NAMES, TARGETS, fastest_reaching, is_tree, ratios_shown, round_spread,
                                      spread_columns)

COLUMNS = ["peer", "metric", "target_share", "target", "tree", "tree_qps", "peer_qps", "qps_ratio"]


def trees_together(curves: pd.DataFrame, metric: str = "ndcg@10", targets=TARGETS) -> pd.DataFrame:
    """One row per (peer, target): the fastest tree reaching ``target_share`` of the lower of the
    trees' best and the peer's best on ``metric``, against the peer's fastest point reaching it.
    Empty with fewer than two trees (the per-tree tables say it all)."""
    trees = curves[curves.system.map(is_tree)]
    columns = COLUMNS + spread_columns(curves)
    if trees.system.nunique() < 2 or metric not in curves:
        return pd.DataFrame(columns=columns)
    out = []
    for peer, points in curves[~curves.system.map(is_tree)].groupby("system", sort=False):
        ceiling = min(trees[metric].max(), points[metric].max())
        for f in targets:
            e, p = fastest_reaching(trees, f * ceiling, metric), fastest_reaching(points, f * ceiling, metric)
            out.append({"peer": peer, "metric": metric, "target_share": f, "target": f * ceiling, "tree": e.system,
                        "tree_qps": e.qps, "peer_qps": p.qps, "qps_ratio": e.qps / p.qps, **round_spread(e, p)})
    return pd.DataFrame(out, columns=columns)


def together_markdown(table: pd.DataFrame) -> str:
    """The section of trained.md: per metric, each peer's three targets and which tree met them."""
    text = ["## The trees together against each peer (the fastest tree at each target, flat or PQ)\n"]
    for metric, rows in table.groupby("metric", sort=False):
        shown = ratios_shown(rows, ["peer", "target_share", "target", "tree", "qps_ratio"])
        below = int((rows.qps_ratio < 1).sum())
        text += [f"### At equal {NAMES[metric]}: the trees below 1.0x at {below} of {len(rows)} points\n",
                 shown.to_markdown(index=False) + "\n"]
    return "\n".join(text)
