"""A rule script's console: its own stderr (C libraries writing to descriptor 2, Python warnings,
INFO lines) goes to the job's log file; the console keeps its warnings, errors and stdout. And the
console of the test config's whole run (the session's one run): short, with progress in each epoch."""

import re
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import os, sys, warnings
    from types import SimpleNamespace
    sys.path.insert(0, {repo!r})
    from ehi.core.rule_script import setup
    log = setup(SimpleNamespace(log=[{log!r}], threads=1, rule="toy"))
    os.write(2, b"WARNING clustering 9 points to 4 centroids: please provide at least 156 training points\\n")
    warnings.warn("a library's deprecation")
    log.info("an info line")
    log.warning("the tree has empty leaves")
    print("a verdict table")
    raise SystemExit(0)
""")


def test_a_jobs_own_stderr_goes_to_its_log_and_warnings_reach_the_console(tmp_path, repo_root):
    log = tmp_path / "job.log"
    code = SCRIPT.format(repo=str(repo_root), log=str(log))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "a verdict table\n"
    console = proc.stderr.splitlines()
    assert len(console) == 1 and console[0].endswith("toy WARNING the tree has empty leaves"), console
    text = log.read_text()
    for line in ("please provide at least 156 training points", "a library's deprecation", "toy INFO an info line",
                 "toy WARNING the tree has empty leaves"):
        assert line in text, (line, text)


def test_an_error_still_reaches_the_console_as_one_line(tmp_path, repo_root):
    code = SCRIPT.format(repo=str(repo_root), log=str(tmp_path / "job.log")).replace(
        "raise SystemExit(0)", "from ehi.core.errors import DataError\nraise DataError('corpus.parquet: no rows')")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1].endswith("toy ERROR corpus.parquet: no rows")
    assert "corpus.parquet: no rows" in (tmp_path / "job.log").read_text()


# Snakemake's own console lines (its banner, job headers and their indented details, progress, job
# stats, the closing lines): everything else a run prints comes from its jobs
SNAKEMAKE_LINE = re.compile(r"""^(
    | \s.*                                          # a job's input:/output:/reason: ..., the banner's fields
    | \[\w{3}\ \w{3}\s+\d+\ [\d:]+\ \d{4}\]         # a job's start or end time
    | (local)?(rule|checkpoint)\ \S+:
    | Finished\ job.* | \d+\ of\ \d+\ steps\ \(\d+%\)\ done(:\ .*)? | \d+\ jobs\ to\ run\ .*
    | Select\ jobs\ to\ execute\.\.\. | Execute\ \d+\ jobs\.\.\. | Building\ DAG\ of\ jobs\.\.\.
    | Using\ shell:.* | Provided\ cores:.* | Rules\ claiming\ more\ threads.* | Assuming\ unrestricted.*
    | Job\ stats: | job\s+count | -+\s+-+ | \S+\s+\d+ | SNAKEMAKE | =+ | host:.* | Conda\ environments:.*
    | Complete\ log.* | Elapsed\ time:.* | Removing\ temporary\ output.* | Touching\ output.*
)$""", re.X)
CONSOLE_BUDGET = 150  # lines of the jobs' own a person reads on the test config's console, Snakemake's aside


def test_the_test_config_console_is_short_and_shows_progress_within_each_epoch(test_config_run):
    """The session's run of the test config (tests/workflow/runs.py): besides Snakemake's own, its
    console is at most CONSOLE_BUDGET lines (no FAISS training-point warnings or absl lines, no
    doubled WARNING), and training prints progress within its epochs."""
    ours = [line for line in test_config_run.console if not SNAKEMAKE_LINE.match(line)]
    assert len(ours) <= CONSOLE_BUDGET, f"{len(ours)} lines besides Snakemake's:\n" + "\n".join(ours)
    text = "\n".join(ours)
    for noise in ("please provide at least", "absl", "WARNING WARNING", "NumbaDeprecation"):
        assert noise not in text, noise
    within = [line for line in ours if re.search(r"train \w+: epoch \d+/\d+ step \d+/\d+ .*steps/s, .* left", line)]
    assert within, "no progress line within an epoch:\n" + text
    assert any(re.search(r"train \w+: epoch \d+/\d+ loss=", line) for line in ours)  # and each epoch's line


def test_each_line_names_its_job_snakemake_says_a_line_a_job_and_the_run_ends_saying_what_to_open(test_config_run):
    """Under the README's command (--quiet rules host, tests/workflow/runs.py): several jobs share the
    console, so each of their log lines says which dataset, seed and setting it is about; Snakemake
    adds one line a job (ehi.core.console) besides its few opening and closing lines, and the run's
    last line names the claims, the KMR table and its figure."""
    console = test_config_run.console
    logged = [line for line in console if re.match(r"^\d{4}-\d\d-\d\d [\d:,]+ ", line)]
    unlabelled = [line for line in logged if not re.match(r"^\S+ \S+ \[test[ \]]", line)]
    assert logged and not unlabelled, "\n".join(unlabelled[:5])
    training = [line for line in logged if re.search(r"\btrain (ehi|de): ", line)]
    assert {re.search(r"\[test (.+?)\]", line).group(1) for line in training} >= {"main", "tree shape: height 1, branching 8"}
    total = int(next(re.match(r"^(\d+) jobs to run", line).group(1) for line in console if re.match(r"^\d+ jobs to run", line)))
    per_job = [line for line in console if re.match(rf"^\d+ of {total} steps \(\d+%\) done: \w+", line)]
    snakemakes = [line for line in console if SNAKEMAKE_LINE.match(line) and line not in per_job]
    assert len(per_job) == total, (total, len(per_job))
    # the banner's few (DAG, shell, cores, the job count) and the log file's and elapsed time's lines
    assert len(snakemakes) <= 10, "\n".join(snakemakes)
    assert not any(re.match(r"^(\s+(input|output|reason):|Select jobs|Execute \d+ jobs)", line) for line in console)
    assert console[-1] == ("test: open results/tables/test_claims.md, results/tables/test_kmr.md, "
                           "results/figures/test/kmr_ndcg_at_10.png")


@pytest.mark.integration
def test_the_default_profile_says_a_line_a_job(tmp_path, repo_root):
    """`snakemake --profile workflow/profiles/default` prints the README command's console: one line
    a job and Snakemake's few opening and closing lines, no job blocks."""
    target = "resources/test/data/manifest.json"  # the test dataset prepared and published: two jobs
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--snakefile", str(repo_root / "Snakefile"),
                           "--directory", str(tmp_path), "--profile", str(repo_root / "workflow" / "profiles" / "default"),
                           "--cores", "1", target, "--configfile", str(repo_root / "config" / "test" / "test.yaml")],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600, cwd=tmp_path)
    console = proc.stdout.splitlines()
    assert proc.returncode == 0, proc.stdout[-3000:]
    total = int(next(re.match(r"^(\d+) jobs to run", line).group(1) for line in console if re.match(r"^\d+ jobs to run", line)))
    per_job = [line for line in console if re.match(rf"^\d+ of {total} steps \(\d+%\) done: \w+", line)]
    assert total >= 2 and len(per_job) == total, console
    assert not any(re.match(r"^(\s+(input|output|reason|jobid):|(local)?rule \w+:|Select jobs|Execute \d+ jobs)", line)
                   for line in console), "\n".join(console)
    assert len(console) <= total + 12, "\n".join(console)  # the profile's line, the banner's, the log file's
