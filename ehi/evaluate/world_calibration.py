"""Calibrate the vector world against a real collection, on exact search only.

The world's difficulty is its ``query_noise``: how far a query lies from the documents it asks
for. The calibration picks it once, before any index is trained, so that exact search on the
world's dev queries scores what exact search scores on a real collection (all-MiniLM-L6-v2 on
SciFact: nDCG@10 0.644, docs/findings.md). Only exact search is read, never a method being
compared, so the world is not tuned toward one. For the record the table also gives the share of
exact nDCG@10 that k-means IVF keeps at 1, 2, 5 and 10% of the documents scored, the shape of its
KMR curve, to set beside the same shares on SciFact's MiniLM vectors.

    python -m ehi.evaluate.world_calibration CALIBRATION_TABLE --set n_docs=10000 --noise 0.6 0.8 1.0 1.2

CALIBRATION_TABLE is the Markdown file written. Every other knob is the world's default unless
``--set`` changes it, as in the study's config.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from ehi.core.ranking import at_budget, ranked_rows_metrics
from ehi.data.embeddings import load_arrays, load_embeddings
from ehi.data.vector_world import WorldConfig, generate_world
from ehi.evaluate.tree_recipe import split_arrays
from ehi.search.registry import build_searcher

BUDGETS = (0.01, 0.02, 0.05, 0.1)


def calibration_row(cfg: WorldConfig, work: Path) -> dict:
    """Exact nDCG@10 on the world's dev queries, and IVF's share of it at each budget."""
    generate_world(work, cfg)
    dataset = load_embeddings(work, name="world")
    docs, queries = (np.ascontiguousarray(a, dtype=np.float32) for a in load_arrays(work))
    dev_q, relevant, _, _ = split_arrays(dataset, queries, "dev")
    exact = build_searcher("exact", docs).search(dev_q, 10, 1)[0]
    row = {"query_noise": cfg.query_noise, "exact_ndcg@10": ranked_rows_metrics(exact, relevant, ("ndcg@10",))["ndcg@10"]}
    nlist = 4 * int(round(np.sqrt(len(docs))))  # the top of IVF's default grid
    ivf = build_searcher("faiss-ivf", docs, nlist=nlist)
    points = []
    for nprobe in ivf.default_sweep():
        rows, _, n_scored = ivf.search(dev_q, 10, nprobe)
        points.append((n_scored.mean() / len(docs), ranked_rows_metrics(rows, relevant, ("ndcg@10",))["ndcg@10"]))
    frac = [p[0] for p in points]
    for b in BUDGETS:
        at = at_budget(frac, b)
        row[f"ivf{nlist}_share@{b:g}"] = np.nan if at is None else points[at][1] / row["exact_ndcg@10"]
    return row


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path, help="the Markdown table")
    parser.add_argument("--noise", type=float, nargs="+", required=True, help="query_noise values to try")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="another world knob")
    args = parser.parse_args(argv)
    base = {k: json.loads(v) for k, v in (s.split("=", 1) for s in args.set)}
    rows = []
    for noise in args.noise:
        with tempfile.TemporaryDirectory() as work:
            rows.append(calibration_row(WorldConfig.from_dict({**base, "query_noise": noise}), Path(work)))
    table = pd.DataFrame(rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(f"World knobs: {json.dumps(base, sort_keys=True)} (the rest default); dev queries.\n\n"
                        + table.to_markdown(index=False, floatfmt=".3f") + "\n")
    print(args.out.read_text())


if __name__ == "__main__":
    main()
