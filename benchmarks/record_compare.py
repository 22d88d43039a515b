"""Keep a finished ``ehi compare`` run under ``results/``: the files its answer rests on, and its cost.

``ehi compare`` writes in a folder of its own (``--out``), outside the checkout. A run the project
reports (rule compare_check holds it to the study it repeats) is kept by copying what a reader
checks it by: the KMR table (its cells in full), the claims, the significance table and the answer
(``report.md``), and where it was timed, the timed comparison; beside them ``run.json``: the command,
the machine, and the cost as GNU time measured it (``/usr/bin/time -v`` around the command).

    /usr/bin/time -v ehi compare DIR --seeds 0 --time --out OUT 2> time.log
    python -m benchmarks.record_compare OUT NAME results/NAME_compare --command "ehi compare DIR ..." --time-log time.log
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


def cost(time_log: Path) -> dict:
    """The run's cost from GNU time's report: wall and CPU seconds, peak resident memory."""
    text = time_log.read_text()
    found = {key: re.search(pattern, text) for key, pattern in TIME_FIELDS.items()}
    missing = [key for key, match in found.items() if match is None]
    if missing:
        raise SystemExit(f"{time_log}: no GNU time -v line for {', '.join(missing)}")
    values = {key: match.group(1) for key, match in found.items()}
    return {"wall_s": round(wall_seconds(values["wall"]), 1),
            "cpu_s": round(float(values["user_s"]) + float(values["system_s"]), 1),
            "max_rss_mb": round(int(values["max_rss_kb"]) / 1024)}


def record(out: Path, name: str, dest: Path, command: str, time_log: Path) -> Path:
    """Copy the run's files from ``out`` to ``dest`` and write ``dest/run.json``; its path."""
    kept = {**KEPT, **(TIMED if (out / TIMED["trained.md"].format(name=name)).is_file() else {})}
    absent = [path.format(name=name) for path in kept.values() if not (out / path.format(name=name)).is_file()]
    if absent:
        raise SystemExit(f"{out}: not a finished run of {name} (no {', '.join(absent)})")
    dest.mkdir(parents=True, exist_ok=True)
    for here, there in kept.items():
        shutil.copyfile(out / there.format(name=name), dest / here)
    run = {"dataset": name, "command": command, "cpu": cpu_model(), "ehi_commit": git_commit(),
           **cost(time_log), "files": sorted(kept)}
    path = dest / "run.json"
    path.write_text(json.dumps(run, indent=1) + "\n")
    return path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the run's --out folder")
    parser.add_argument("name", help="the run's dataset name (its vectors folder's name unless --name)")
    parser.add_argument("dest", type=Path, help="where to keep it, under results/")
    parser.add_argument("--command", required=True, help="the command as it ran")
    parser.add_argument("--time-log", type=Path, required=True, help="GNU time -v's report of the command")
    args = parser.parse_args(argv)
    print(record(args.out, args.name, args.dest, args.command, args.time_log))


if __name__ == "__main__":
    main()
