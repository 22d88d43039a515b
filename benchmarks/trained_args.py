"""The flags of ``python -m benchmarks.trained``, each checked before anything is built.

argparse checks every number's type and range (a round, a thread, a list count at least one; an
HNSW degree at least two, below which FAISS aborts; a positive fraction at which a sweep stops).
:func:`check_systems` then checks the names against the systems the run holds: a ``--tree``
variant without a trained index, a ``--systems`` or ``--group`` name that is no system, a system in
two groups (it would be built, timed and reported twice), a system whose embeddings or index are
not there (a ``--peer-encoder`` never trained, a ``--seed`` without its replica) and a ``--logs``
folder that is not one are each refused in one line.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path


def _at_least(least: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"{value} is below {least}")
        return value
    parse.__name__ = f"integer >= {least}"
    return parse


def _positive_fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value <= 0 or value > 1:
        raise argparse.ArgumentTypeError(f"{text} is not a fraction > 0 and <= 1 (a sweep stopped at 0 keeps one point)")
    return value


def _tree(text: str) -> tuple[str, str]:
    name, sep, variant = text.partition("=")
    if not sep or not name or not variant:
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME=VARIANT (e.g. ehi-floor+tree=floor~kmeans)")
    return name, variant


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("resources", type=Path, help="resources/<dataset> of a pipeline run")
    p.add_argument("out_dir", type=Path, help="writes trained_*.parquet, trained_pareto.png, trained.md")
    p.add_argument("--rounds", type=_at_least(1), default=3)
    p.add_argument("--threads", type=_at_least(1), nargs="+", default=[1], help="thread counts for batched QPS")
    p.add_argument("--n-latency", type=_at_least(1), default=100)
    p.add_argument("--seed", type=_at_least(0), default=None, help="time this seed~S replica's trees (default: train.seed's)")
    p.add_argument("--tree", action="append", type=_tree, metavar="NAME=VARIANT", help="a tree system, in place of discovery")
    p.add_argument("--peer-encoder", choices=("de", "ehi"), help="the peers' embeddings (default: de if trained)")
    p.add_argument("--systems", nargs="+", help="only these of the systems found")
    p.add_argument("--note", default="", help="a line for trained.md (the machine, its load)")
    p.add_argument("--lists", type=_at_least(1), nargs="+", help="the peers' list counts (default: the sqrt(N) grid)")
    p.add_argument("--hnsw-m", type=_at_least(2), nargs="+", help="HNSW degrees to tune over (default: 16 and 32)")
    p.add_argument("--hnsw-ef-construction", type=_at_least(1), help="HNSW's efConstruction (default: search.hnsw_ef_construction's)")
    p.add_argument("--max-frac", type=_positive_fraction, default=1.0, help="stop a sweep past this fraction scored")
    p.add_argument("--budget-cost", choices=("documents", "work"), help="the cost the peers' dev tuning reads "
                   "(the run's search.budget_cost; default: documents)")
    p.add_argument("--every-build", action="store_true", help="measure each peer at every point of its grid "
                   "(HNSW's M, ScaNN's leaves and reordering, IVF's lists), one curve over all, instead of the "
                   "dev-tuned one")
    p.add_argument("--group", action="append", nargs="+", metavar="SYSTEM", help="build, time and free these "
                   "systems together, before the next group (the rest form the last group): bounds memory at scale")
    p.add_argument("--logs", type=Path, help="logs/<dataset>: the training jobs' costs (default: "
                   "logs/ named as the resources folder)")
    return p


def check_systems(p: argparse.ArgumentParser, args: argparse.Namespace, found: dict) -> None:
    """``found``: {system: folder} of the run (after --tree); refuses, through ``p.error``, a name
    that is no system of it and a system named by two groups."""
    if not args.resources.is_dir():
        p.error(f"resources {args.resources}: not a directory (resources/<dataset> of a pipeline run)")
    for name, variant in args.tree or ():
        if not (args.resources / variant / "ehi" / "index" / "index.json").is_file():
            p.error(f"--tree {name}={variant}: no trained index at {args.resources / variant / 'ehi' / 'index'}")
    if args.logs is not None and not args.logs.is_dir():
        p.error(f"--logs {args.logs}: not a directory (logs/<dataset> of the pipeline run)")
    unknown = [n for n in args.systems or () if n not in found]
    if unknown:
        p.error(f"--systems {' '.join(unknown)}: not a system of this run; found: {', '.join(found)}")
    kept = [n for n in found if not args.systems or n in args.systems]
    from benchmarks.trained_report import is_tree

    for name in kept:  # a peer encoder never trained, a --seed without its replica: nothing to search
        needs = found[name] / ("index/index.json" if is_tree(name) else "emb/corpus.npy")
        if not needs.is_file():
            flag = "--seed" if args.seed is not None else "--peer-encoder" if not is_tree(name) else "--tree"
            p.error(f"{flag}: {name} has no {needs.relative_to(found[name])} at {found[name]}")
    seen: dict[str, int] = {}
    for i, group in enumerate(args.group or (), start=1):
        for name in group:
            if name not in kept:
                p.error(f"--group {' '.join(group)}: {name!r} is not a system of this run; systems: {', '.join(kept)}")
            if name in seen:
                p.error(f"--group: {name!r} is in group {seen[name]} and group {i}; a system is built and timed once")
            seen[name] = i
