"""Calibrate the vector world against a real collection, on facts of the data alone.

A world's difficulty and shape come from its knobs (``WorldConfig``: how far a query lies from the
documents it asks for, whether queries are shifted away from documents, how many documents a query
asks for, how anisotropic the corpus is). The calibration generates one world per point of a knob
grid and measures on its dev queries the facts rule ``geometry`` measures on a real collection
(ehi.report.world_fit.geometry: how close a query's nearest document is, how far behind it the best
relevant one lies, how often the nearest is relevant, the corpus's mean pairwise cosine) and exact
search's nDCG@10, then ranks the points by their distance to the collection's facts. Only exact
search and the data are read, never a method being compared, so the world is not tuned toward one.
For the record each row also gives the share of exact nDCG@10 that k-means IVF keeps at 1, 2, 5 and
10% of the documents scored, the shape of its KMR curve, to set beside the collection's own
(results/tables/world_fit.md).

Rule ``world_calibration`` (workflow/multi.smk) runs it from the config's ``world_calibration:``
section: the target dataset, the knobs every point shares and the grid.
"""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from ehi.core.ranking import at_budget, ranked_rows_metrics
from ehi.data.embeddings import load_arrays, load_embeddings
from ehi.data.vector_world import WorldConfig, generate_world
from ehi.evaluate.tree_recipe import split_arrays
from ehi.report.world_fit import geometry
from ehi.search.registry import EXACT_KIND, IVF_KIND, build_searcher

BUDGETS = (0.01, 0.02, 0.05, 0.1)
# the facts a world is held to, each a cosine, a rate or an nDCG on the same [0, 1] scale, so their
# absolute differences add up without weights
FACTS = ("exact_ndcg@10", "nearest_cos_median", "relevant_gap_median", "top1_relevant", "doc_pair_cos_mean")


def grid_points(base: dict, grid: dict[str, list]) -> list[dict]:
    """Every combination of the grid's values, each over the knobs ``base`` fixes (the grid's
    keys vary fastest last, in the order given)."""
    keys = list(grid)
    return [{**base, **dict(zip(keys, values))} for values in itertools.product(*(grid[k] for k in keys))]


def ivf_shares(docs: np.ndarray, dev_q: np.ndarray, relevant: list, exact: float) -> dict[str, float]:
    """k-means IVF's share of exact nDCG@10 at each budget of documents scored (4 sqrt(N) lists,
    the top of IVF's default grid; NaN where it has no point that cheap)."""
    nlist = 4 * int(round(np.sqrt(len(docs))))
    ivf = build_searcher(IVF_KIND, docs, nlist=nlist)
    points = []
    for nprobe in ivf.default_sweep():
        rows, _, n_scored = ivf.search(dev_q, 10, nprobe)
        points.append((n_scored.mean() / len(docs), ranked_rows_metrics(rows, relevant, ("ndcg@10",))["ndcg@10"]))
    frac = [p[0] for p in points]
    out = {}
    for b in BUDGETS:
        at = at_budget(frac, b)
        out[f"ivf_share@{b:g}"] = np.nan if at is None or not exact else points[at][1] / exact
    return out


def calibration_row(cfg: WorldConfig, work: Path) -> dict:
    """One world's facts on its dev queries: exact nDCG@10, geometry and IVF's shares."""
    generate_world(work, cfg)
    dataset = load_embeddings(work, name="world")
    docs, queries = (np.ascontiguousarray(a, dtype=np.float32) for a in load_arrays(work))
    dev_q, relevant, _, _ = split_arrays(dataset, queries, "dev")
    exact_rows = build_searcher(EXACT_KIND, docs).search(dev_q, 10, 1)[0]
    exact = ranked_rows_metrics(exact_rows, relevant, ("ndcg@10",))["ndcg@10"]
    facts = geometry(docs, dev_q, relevant, seed=cfg.seed)
    return {"exact_ndcg@10": exact, **facts, **ivf_shares(docs, dev_q, relevant, exact)}


def distance(row: dict | pd.Series, target: dict) -> float:
    """Sum of absolute differences over the facts both sides have."""
    return float(sum(abs(row[f] - target[f]) for f in FACTS if f in target and not pd.isna(target[f])))


def calibration_table(base: dict, grid: dict[str, list], target: dict, progress=None) -> pd.DataFrame:
    """One row per grid point (its varied knobs, its facts, its distance to ``target``), the
    closest first."""
    rows = []
    for point in grid_points(base, grid):
        with tempfile.TemporaryDirectory() as work:
            row = calibration_row(WorldConfig.from_dict(point), Path(work))
        rows.append({**{k: point[k] for k in grid}, **row, "distance": distance(row, target)})
        if progress:
            progress(rows[-1])
    table = pd.DataFrame(rows).sort_values("distance", kind="stable").reset_index(drop=True)
    table.attrs["knobs"] = list(grid)  # the columns a world differs in, shown first
    return table


def calibration_markdown(table: pd.DataFrame, base: dict, target_name: str, target: dict) -> str:
    """The table with the target's facts as its first row and one line on how to read it."""
    knobs = table.attrs.get("knobs", [])
    show = [*knobs, *FACTS, *[f"ivf_share@{b:g}" for b in BUDGETS], "distance"]
    # the target's row is named in the first knob's column (the grid has at least one knob to show)
    label = {knobs[0]: f"{target_name} (target)"} if knobs else {}
    target_row = pd.DataFrame([{**{k: "" for k in knobs}, **label, **{f: target.get(f, np.nan) for f in FACTS}}])
    shown = pd.concat([target_row, table[show]], ignore_index=True)
    fixed = ", ".join(f"{k} {v}" for k, v in sorted(base.items())) or "the defaults"
    return (f"Worlds held to {target_name}: one world a row (knobs not shown: {fixed}; the rest WorldConfig's "
            "defaults), its facts on its dev queries, the target's from its own files (rule geometry, exact "
            "search's nDCG@10 on its test queries). `distance` sums the absolute differences of the five facts; "
            "the closest world is the first row after the target. `ivf_share@b` is k-means IVF's nDCG@10 at b "
            "of the documents scored over exact search's.\n\n"
            + shown.to_markdown(index=False, floatfmt=".3f") + "\n")
