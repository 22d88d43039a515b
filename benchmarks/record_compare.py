"""Keep a finished ``ehi compare`` run under ``results/``: the files its answer rests on, and its cost.

``ehi compare`` writes in a folder of its own (``--out``), outside the checkout. A run the project
reports (rule compare_check holds it to the study it repeats) is kept by copying what a reader
checks it by: the KMR table (its cells in full), the claims, the significance table and the answer
(``report.md``), and where it was timed, the timed comparison; beside them ``run.json``: the command,
the machine, and the cost as GNU time measured it (``/usr/bin/time -v`` around the command), the jobs' own times by rule (Snakemake's benchmark files
under ``OUT/logs/``), and with ``--plan`` (the dry run of another seed count, ``ehi compare DIR -n``)
that run's cost projected from them: the measured wall time scaled by the timed work the plan holds
against the work this run timed, each rule's jobs at this run's mean time a job.

    /usr/bin/time -v -o time.log ehi compare DIR --seeds 0 --time --out OUT
    ehi compare DIR --out OUT -n > plan.txt   # the three-seed plan
    python -m benchmarks.record_compare OUT NAME results/NAME_compare --command "ehi compare DIR ..." \
        --time-log time.log --plan plan.txt
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
from pathlib import Path

from ehi.core.kernels import cpu_model
from ehi.core.provenance import git_commit

# what a reader checks the run by: {name here: its path under OUT}; the timed ones only where timed
KEPT = {"kmr.csv": "results/tables/{name}_kmr.csv", "kmr.md": "results/tables/{name}_kmr.md",
        "claims.md": "results/tables/{name}_claims.md", "significance.md": "results/tables/{name}_significance.md",
        "significance.parquet": "results/{name}/significance.parquet", "report.md": "report.md"}
TIMED = {"trained.md": "results/benchmarks/trained_{name}/trained.md",
         "trained_matched.parquet": "results/benchmarks/trained_{name}/trained_matched.parquet",
         "trained_pareto.png": "results/benchmarks/trained_{name}/trained_pareto.png"}
# GNU time -v's lines for the cost: wall clock, CPU seconds of the command and its children, peak memory
TIME_FIELDS = {"user_s": r"User time \(seconds\): ([\d.]+)", "system_s": r"System time \(seconds\): ([\d.]+)",
               "wall": r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)",
               "max_rss_kb": r"Maximum resident set size \(kbytes\): (\d+)"}


def wall_seconds(clock: str) -> float:
    """GNU time's 'h:mm:ss' or 'm:ss.cs' as seconds."""
    seconds = 0.0
    for part in clock.split(":"):
        seconds = 60 * seconds + float(part)
    return seconds


def cost(time_logs: list[Path]) -> dict:
    """The run's cost from GNU time's reports of its calls (a run and its timed part, say): wall and
    CPU seconds summed, the peak resident memory of the largest."""
    each = [_one_cost(path) for path in time_logs]
    return {"wall_s": round(sum(c["wall_s"] for c in each), 1), "cpu_s": round(sum(c["cpu_s"] for c in each), 1),
            "max_rss_mb": max(c["max_rss_mb"] for c in each)}


def _one_cost(time_log: Path) -> dict:
    text = time_log.read_text()
    found = {key: re.search(pattern, text) for key, pattern in TIME_FIELDS.items()}
    missing = [key for key, match in found.items() if match is None]
    if missing:
        raise SystemExit(f"{time_log}: no GNU time -v line for {', '.join(missing)}")
    values = {key: match.group(1) for key, match in found.items()}
    return {"wall_s": round(wall_seconds(values["wall"]), 1),
            "cpu_s": round(float(values["user_s"]) + float(values["system_s"]), 1),
            "max_rss_mb": round(int(values["max_rss_kb"]) / 1024)}


# the rules Snakemake times (their ``benchmark:`` files, named by rule and, for some, system or model)
TIMED_RULES = ("train_de", "train_ehi", "embed", "search", "ehi_index", "dev_leaf_count", "trained_benchmark")


def jobs_by_rule(out: Path) -> dict[str, dict]:
    """{rule: jobs, wall and CPU seconds} from every benchmark file the run wrote under OUT/logs/."""
    import pandas as pd

    by_rule: dict[str, dict] = {}
    for path in sorted((out / "logs").rglob("benchmarks/*.tsv")):
        rule = next((r for r in TIMED_RULES if path.stem == r or path.stem.startswith(f"{r}_")), None)
        if rule is None:
            continue
        row = pd.read_csv(path, sep="\t").iloc[-1]  # a rerun job appends: its last run
        entry = by_rule.setdefault(rule, {"jobs": 0, "wall_s": 0.0, "cpu_s": 0.0})
        entry["jobs"] += 1
        entry["wall_s"] = round(entry["wall_s"] + float(row.s), 1)
        entry["cpu_s"] = round(entry["cpu_s"] + float(row.cpu_time), 1)
    return by_rule


def planned_jobs(plan: Path) -> dict[str, int]:
    """{rule: jobs} of a dry run's 'Job stats' table."""
    counts, inside = {}, False
    for line in plan.read_text().splitlines():
        if line.startswith("Job stats"):
            inside = True
        elif inside and line.startswith("total"):
            break
        elif inside and re.match(r"^[a-z_]+\s+\d+$", line.strip()):
            rule, count = line.split()
            counts[rule] = int(count)
    if not counts:
        raise SystemExit(f"{plan}: no 'Job stats' table (the output of ehi compare DIR -n)")
    return counts


def projection(by_rule: dict[str, dict], plan: dict[str, int], wall_s: float) -> dict:
    """The planned run's wall time: this run's, scaled by the timed work (jobs x this run's mean wall
    seconds a job, rule by rule) the plan holds against what this run timed."""
    done = sum(entry["wall_s"] for entry in by_rule.values())
    planned = sum(plan.get(rule, 0) * entry["wall_s"] / entry["jobs"] for rule, entry in by_rule.items())
    return {"jobs": sum(plan.values()), "timed_work_ratio": round(planned / done, 2),
            "wall_s": round(wall_s * planned / done)}


def stopped_call(start: str, end: str) -> dict:
    """A call stopped before GNU time could report (killed with its machine): its wall time from the
    ``date`` stamps around it. Its CPU seconds and memory are not known; the jobs it finished are in
    ``jobs_by_rule`` all the same (their benchmark files outlive the call)."""
    from datetime import datetime

    stamps = [datetime.strptime(s.strip(), "%a %b %d %H:%M:%S %Z %Y") for s in (start, end)]
    return {"start": start.strip(), "end": end.strip(), "wall_s": round((stamps[1] - stamps[0]).total_seconds(), 1)}


def record(out: Path, name: str, dest: Path, commands: list[str], time_logs: list[Path], plan: Path | None = None,
           stopped: list[tuple[str, str]] = ()) -> Path:
    """Copy the run's files from ``out`` to ``dest`` and write ``dest/run.json``; its path. A run that
    was stopped and resumed counts each stopped call's wall time; its CPU seconds and peak memory are
    those GNU time reported (``cpu_s_of_calls``: reported calls of all)."""
    kept = {**KEPT, **(TIMED if (out / TIMED["trained.md"].format(name=name)).is_file() else {})}
    absent = [path.format(name=name) for path in kept.values() if not (out / path.format(name=name)).is_file()]
    if absent:
        raise SystemExit(f"{out}: not a finished run of {name} (no {', '.join(absent)})")
    dest.mkdir(parents=True, exist_ok=True)
    for here, there in kept.items():
        shutil.copyfile(out / there.format(name=name), dest / here)
    run = {"dataset": name, "command": " && ".join(commands), "cpu": cpu_model(), "ehi_commit": git_commit(),
           **cost(time_logs), "jobs_by_rule": jobs_by_rule(out), "files": sorted(kept)}
    if stopped:
        run["stopped_calls"] = [stopped_call(*pair) for pair in stopped]
        run["wall_s"] = round(run["wall_s"] + sum(call["wall_s"] for call in run["stopped_calls"]), 1)
        run["cpu_s_of_calls"] = f"{len(time_logs)} of {len(time_logs) + len(stopped)}"
    if plan is not None:
        run["projected"] = {"plan": plan.name, **projection(run["jobs_by_rule"], planned_jobs(plan), run["wall_s"])}
    path = dest / "run.json"
    path.write_text(json.dumps(run, indent=1) + "\n")
    return path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the run's --out folder")
    parser.add_argument("name", help="the run's dataset name (its vectors folder's name unless --name)")
    parser.add_argument("dest", type=Path, help="where to keep it, under results/")
    parser.add_argument("--command", required=True, action="append", help="a command as it ran (again for each call)")
    parser.add_argument("--time-log", type=Path, required=True, action="append",
                        help="GNU time -v's report of a command (again for each call)")
    parser.add_argument("--plan", type=Path, default=None, help="a dry run of another seed count, to project its cost")
    parser.add_argument("--stopped-call", nargs=2, action="append", default=[], metavar=("START", "END"),
                        help="the `date` stamps around a call stopped before GNU time reported (again for each)")
    args = parser.parse_args(argv)
    print(record(args.out, args.name, args.dest, args.command, args.time_log, args.plan,
                 [tuple(pair) for pair in args.stopped_call]))


if __name__ == "__main__":
    main()
