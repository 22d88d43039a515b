"""What a report-only run (``snakemake tables``) lacks, and which target would make it (read while
the Snakefile parses, so kept light).

A fresh clone, or a run of some ablations only, has the results of some variants and not of
others. The report renders what is cached; this names what is not, grouped by the target that
writes it, instead of Snakemake's list of absolute paths no rule can make.
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path


def target_of(path: str, results_dir: str, ablations: dict[str, list[str]]) -> str:
    """The named target whose run writes ``path`` (a file under ``results_dir``)."""
    relative = os.path.relpath(path, results_dir).replace(os.sep, "/")
    for name, variants in ablations.items():
        if any(relative.startswith(f"{variant}/") for variant in variants):
            return f"ablation_{name}"
    return "main"


def describe_missing(paths, results_dir: str, ablations: dict[str, list[str]], config_args: str = "") -> str:
    """One line per target: the files it would write that the report goes without."""
    by_target: dict[str, list[str]] = defaultdict(list)
    for path in paths:
        by_target[target_of(path, results_dir, ablations)].append(os.path.relpath(path, results_dir))
    lines = [f"tables: rendering the cached results; {len(list(paths))} file(s) under {results_dir} are missing "
             "and their rows are left out:"]
    for target, files in by_target.items():
        shown = ", ".join(sorted(files)[:4]) + (f" and {len(files) - 4} more" if len(files) > 4 else "")
        lines.append(f"  snakemake --cores N {target}{config_args} would write {shown}")
    return "\n".join(lines)


def what_to_open(datasets, root: str | os.PathLike = ".") -> list[str]:
    """The closing line of a run, one per dataset whose tables exist: the claims' verdicts, the
    KMR table and its nDCG@10 figure (or the first KMR figure), the files a person opens first."""
    lines = []
    for ds in datasets:
        tables, figures = Path(root, "results", "tables"), Path(root, "results", "figures", ds)
        if not (tables / f"{ds}_kmr.md").exists():
            continue
        figure = figures / "kmr_ndcg_at_10.png"
        figure = figure if figure.exists() else next(iter(sorted(figures.glob("kmr_*.png"))), None)
        shown = [f"results/tables/{ds}_claims.md" if (tables / f"{ds}_claims.md").exists() else None,
                 f"results/tables/{ds}_kmr.md", figure and f"results/figures/{ds}/{figure.name}"]
        lines.append(f"{ds}: open " + ", ".join(s for s in shown if s))
    return lines
