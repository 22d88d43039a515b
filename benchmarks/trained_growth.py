"""How the trained-index benchmark's costs grow with the corpus: several runs of
:mod:`benchmarks.trained` (one folder each, e.g. the scale study's worlds at 10^4 and 10^6
documents) read side by side, and a log-log figure of QPS at equal quality, build time, index
memory and training time against N.

QPS at equal quality is each system's fastest measured point reaching ``share`` of the best
nDCG@10 any system of that folder reaches, with the fewest threads measured; a system that never
reaches it has no point at that N. The IVF with as many lists as the tree has leaves is named
``faiss-ivf-L`` at every N, whatever its list count. An index memory reading below its documents'
ids (4 bytes each) is left out: resident growth that small is the heap a freed index left, not
the index (ScaNN's 2 MiB at 10^6, docs/findings.md).

    python -m benchmarks.trained_growth results/benchmarks/trained_world_1e4 \
        results/benchmarks/trained_world_1e6 --out results/benchmarks/trained_growth
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.trained_report import fastest_reaching

SHARE = 0.95
ID_BYTES = 4  # the least an index of N documents holds: their ids
SERIES = 8  # lines a panel at most: the trees in each row, the baselines split over rows
_LISTS = re.compile(r"(faiss-ivf-L)\d+$")


def family(system: str) -> str:
    return _LISTS.sub(r"\1", system)


def growth_table(folders: list[Path], share: float = SHARE) -> pd.DataFrame:
    """One row per (folder's N, system): QPS at ``share`` of the folder's best nDCG@10 and the costs."""
    rows = []
    for folder in folders:
        curves = pd.read_parquet(Path(folder) / "trained_curves.parquet")
        curves = curves[curves.threads == curves.threads.min()]
        costs_path = Path(folder) / "trained_costs.parquet"
        cost = pd.read_parquet(costs_path).set_index("system") if costs_path.exists() else pd.DataFrame()
        target = share * curves["ndcg@10"].max()
        for system, curve in curves.groupby("system", sort=False):
            point = fastest_reaching(curve, target)
            c = cost.loc[system] if system in cost.index else {}
            rows.append({"n_docs": int(curve.n_docs.iloc[0]), "system": family(system), "target_ndcg@10": target,
                         "qps": np.nan if point is None else float(point.qps),
                         "frac_scored": np.nan if point is None else float(point.frac_scored),
                         **{k: float(c.get(k, np.nan)) for k in ("build_s", "index_mb", "train_s", "train_max_rss_mb")},
                         "folder": Path(folder).as_posix()})
    table = pd.DataFrame(rows).sort_values(["system", "n_docs"], ignore_index=True)
    table.loc[table.index_mb < ID_BYTES * table.n_docs / 2**20, "index_mb"] = np.nan
    return table


def growth_figure(table: pd.DataFrame, path: Path, share: float = SHARE) -> Path:
    """Four log-log panels against N, one line per system in its report colour and marker; a row of
    panels a group of baselines, each beside EHI's trees, so no panel draws more than SERIES lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ehi.report.styles import is_ehi_search, label, note_beyond, style

    systems = list(dict.fromkeys(table.system))
    trees = [s for s in systems if is_ehi_search(s)]
    others = [s for s in systems if s not in trees]
    groups = [list(g) for g in np.array_split(others, max(1, -(-len(others) // max(1, SERIES - len(trees)))))]
    panels = (("qps", f"QPS at {share:.0%} of the best nDCG@10 (1 thread)"), ("build_s", "build seconds"),
              ("index_mb", "index memory (MiB, resident growth)"), ("train_s", "tree training seconds (train_ehi)"))
    fig, axes = plt.subplots(len(groups), len(panels), figsize=(15, 3.6 * len(groups)), squeeze=False, sharex=True)
    for row, group in zip(axes, groups):
        for ax, (col, title) in zip(row, panels):
            for system in trees + group:
                rows = table[(table.system == system) & np.isfinite(table[col]) & (table[col] > 0)]
                if not rows.empty:
                    look = style(system)
                    ax.plot(rows.n_docs, rows[col], color=look["color"], marker=look["marker"], label=label(system))
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("documents N" if row is axes[-1] else "")
            ax.set_title(title, fontsize=9)
            ax.grid(alpha=0.3, which="both")
        handles, labels = row[0].get_legend_handles_labels()
        row[-1].legend(handles, labels, loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=8)
    note_beyond(fig, systems)
    fig.suptitle("The trained-index benchmark against N (scale study worlds)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=150, bbox_inches="tight")
    plt.close(fig)
    return Path(path)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folders", type=Path, nargs="+", help="output folders of benchmarks.trained")
    parser.add_argument("--out", type=Path, required=True, help="writes OUT.parquet, OUT.md and OUT.png")
    parser.add_argument("--share", type=float, default=SHARE)
    args = parser.parse_args(argv)
    table = growth_table(args.folders, args.share)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    table.to_parquet(args.out.with_suffix(".parquet"), index=False)
    shown = table.drop(columns="folder").round({"target_ndcg@10": 3, "qps": 1, "frac_scored": 4, "build_s": 1,
                                                "index_mb": 0, "train_s": 0, "train_max_rss_mb": 0})
    args.out.with_suffix(".md").write_text(f"# The trained-index benchmark against N\n\nFrom "
                                           f"{', '.join(f'`{f}`' for f in args.folders)}. An index memory below "
                                           f"{ID_BYTES} bytes a document (its ids alone) is left out (nan): "
                                           "resident growth that small is the heap a freed index left.\n\n"
                                           + shown.to_markdown(index=False) + "\n")
    growth_figure(table, args.out.with_suffix(".png"), args.share)


if __name__ == "__main__":
    main()
