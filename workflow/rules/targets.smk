# The targets named on the command line, shared by one dataset's rules (common.smk) and by the
# several-datasets branch (../multi.smk), which both re-render from cached results when asked only
# for tables.


def requested_targets():
    """The targets named on the command line (Snakemake does not expose them while parsing)."""
    import sys

    from snakemake.cli import get_argument_parser

    try:
        args, _ = get_argument_parser().parse_known_args(sys.argv[1:])
        return list(args.targets or [])
    except (SystemExit, Exception):  # not the CLI (API use, a spawned job): the full DAG
        return []


def report_only(cached_results: bool) -> bool:
    """Whether this run only re-renders the report (targets ``tables``, ``claims`` and
    ``compare_check``, which holds a kept compare run to the cached summaries, alone) from cached
    results as they are; ``cached_results``: whether such results exist."""
    targets = set(requested_targets())
    return bool(targets) and targets <= {"tables", "claims", "compare_check"} and cached_results
