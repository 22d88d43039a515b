"""benchmarks/record_compare.py: a finished ``ehi compare`` run kept under results/ with its cost as
GNU time measured it, its jobs' times by rule, and another seed count's cost projected from them."""

import json

import pytest

from benchmarks.record_compare import KEPT, main

TIME_LOG = """\tCommand being timed: "ehi compare mine --seeds 0 --out OUT"
\tUser time (seconds): 3000.50
\tSystem time (seconds): 99.50
\tElapsed (wall clock) time (h:mm:ss or m:ss): 1:02:03
\tMaximum resident set size (kbytes): 2097152
"""
PLAN = """Job stats:
job                      count
---------------------  -------
train_de                     4
search                      20
tables                       1
total                       25
"""


def finished_run(out, name="mine"):
    for path in KEPT.values():
        target = out / path.format(name=name)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("x\n")
    for rel, seconds in {"mine/lr_encoder~0.0001/benchmarks/train_de.tsv": 600.0,
                         "mine/lr_encoder~0.001/benchmarks/train_de.tsv": 400.0,
                         "mine/main/benchmarks/search_de+exact.tsv": 50.0,
                         "mine/main/benchmarks/search_pre+exact.tsv": 30.0}.items():
        path = out / "logs" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"s\th:m:s\tmax_rss\tcpu_time\n{seconds}\t0:00:00\t100\t{seconds / 2}\n")


def test_a_run_is_kept_with_its_cost_its_jobs_and_a_projection(tmp_path):
    out, dest = tmp_path / "OUT", tmp_path / "results" / "mine_compare"
    finished_run(out)
    (tmp_path / "time.log").write_text(TIME_LOG)
    (tmp_path / "plan.txt").write_text(PLAN)
    main([str(out), "mine", str(dest), "--command", "ehi compare mine --seeds 0 --out OUT",
          "--time-log", str(tmp_path / "time.log"), "--plan", str(tmp_path / "plan.txt")])
    run = json.loads((dest / "run.json").read_text())
    assert sorted(p.name for p in dest.iterdir()) == sorted([*KEPT, "run.json"])
    assert (run["wall_s"], run["cpu_s"], run["max_rss_mb"]) == (3723.0, 3100.0, 2048)
    assert run["jobs_by_rule"] == {"train_de": {"jobs": 2, "wall_s": 1000.0, "cpu_s": 500.0},
                                   "search": {"jobs": 2, "wall_s": 80.0, "cpu_s": 40.0}}
    # the plan: 4 DE trainings at 500 s a job, 20 searches at 40 s: 2,800 s of timed work against 1,080
    assert run["projected"] == {"plan": "plan.txt", "jobs": 25, "timed_work_ratio": 2.59,
                                "wall_s": round(3723.0 * 2800 / 1080)}


def test_an_unfinished_run_or_a_log_without_times_is_refused(tmp_path):
    out = tmp_path / "OUT"
    (tmp_path / "time.log").write_text(TIME_LOG)
    with pytest.raises(SystemExit, match="not a finished run of mine"):
        main([str(out), "mine", str(tmp_path / "d"), "--command", "c", "--time-log", str(tmp_path / "time.log")])
    finished_run(out)
    (tmp_path / "bad.log").write_text("Command exited with non-zero status 1\n")
    with pytest.raises(SystemExit, match="no GNU time -v line for user_s, system_s, wall, max_rss_kb"):
        main([str(out), "mine", str(tmp_path / "d"), "--command", "c", "--time-log", str(tmp_path / "bad.log")])


def test_a_stopped_and_resumed_run_counts_the_stopped_calls_wall_time(tmp_path):
    """A call killed with its machine wrote no GNU time report: its wall time comes from the stamps
    around it, and run.json says its CPU seconds are those of the calls GNU time reported."""
    out, dest = tmp_path / "OUT", tmp_path / "results" / "mine_compare"
    finished_run(out)
    (tmp_path / "time.log").write_text(TIME_LOG)
    main([str(out), "mine", str(dest), "--command", "ehi compare mine --seeds 0 --out OUT",
          "--time-log", str(tmp_path / "time.log"),
          "--stopped-call", "Mon Dec  7 13:32:08 UTC 2026", "Mon Dec  7 14:59:27 UTC 2026"])
    run = json.loads((dest / "run.json").read_text())
    assert run["stopped_calls"] == [{"start": "Mon Dec  7 13:32:08 UTC 2026", "end": "Mon Dec  7 14:59:27 UTC 2026",
                                     "wall_s": 5239.0}]
    assert (run["wall_s"], run["cpu_s"], run["cpu_s_of_calls"]) == (3723.0 + 5239.0, 3100.0, "1 of 2")
