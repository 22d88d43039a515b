"""``ehi compare DIR``: a folder of precomputed vectors to the index comparison, in one command.

It runs the pipeline (``snakemake all``) with the folder as the dataset, named after the folder: on
config/embeddings_decisive.yaml (the decisive comparison: DE, the two-stage trees, the frozen trees
and every peer on both vector sets), or with ``--quick`` on config/embeddings.yaml (the frozen study,
one seed); :mod:`ehi.serve.compare_config` says which keys of the folder's own are written to
``resources/NAME/compare.yaml`` and layered last. ``--time`` then times the two-stage tree with the
larger dev area against the tuned peers (rule ``trained_benchmark``). It runs in a working folder of
its own (``--out``; by default ``NAME_compare`` beside DIR, never the checkout's committed
``results/``), then says where the claims table, the KMR table and figure, the searchable index and
the timed report are. Its console is the README's command's: a line a job, the warnings, the closing
pointer; Snakemake's whole console goes to ``compare.log`` in that folder. What the run compares is
written in the two configs and docs/embeddings.md.

The pipeline is a repository checkout's (its Snakefile and configs), with the ``[pipeline]``
extra installed; the library alone (``pip install .`` without extras) has neither, and the command says so.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
from pathlib import Path

import yaml

from ehi.core.errors import ConfigError
from ehi.serve.compare_config import (REPO, best_two_stage, check_judgements, config_file, dev_areas,
                                      first_two_stage, own_config, search_index, timed_report, timed_section)
from ehi.serve.compare_run import check_cores, finish_record, holding_out, lock_advice, pending, run_owned

NAME_PATTERN = r"^(?!\.\.?$)[A-Za-z0-9_.-]{1,100}$"  # the schema's dataset.name


def dataset_name(folder: Path, name: str | None) -> str:
    """``name``, or the folder's own name with every character a path component cannot take made '_'."""
    name = name or re.sub(r"[^A-Za-z0-9_.-]", "_", folder.resolve().name)[:100]
    if not re.match(NAME_PATTERN, name):
        raise ConfigError(f"dataset name {name!r}: letters, digits, '_', '.' and '-' only; pass --name")
    return name


def check_results_are_ours(name: str, folder: Path, workdir: Path) -> None:
    """Results under ``name`` that another dataset made are refused: they would be overwritten."""
    results, manifest = workdir / "results" / name, workdir / "resources" / name / "data" / "manifest.json"
    made_from = None
    if manifest.is_file():
        try:
            made_from = json.loads(manifest.read_text())["config"].get("path")
        except (OSError, ValueError, KeyError, AttributeError):
            made_from = None
    if made_from is not None and Path(made_from).resolve() == folder.resolve():
        return
    if results.exists() or manifest.exists():
        raise ConfigError(f"{results} holds results of another dataset than {folder}; "
                          "pass --name with a name of its own")


def snakemake_command(folder: Path, name: str, cores: int, seeds: list[int] | None, extra: list[str],
                      workdir: Path, path: Path | None = None, quiet: bool = True, quick: bool = False,
                      timed: dict | None = None, targets: tuple[str, ...] = ("all",)) -> list[str]:
    """The pipeline call: the run's config (:func:`ehi.serve.compare_config.config_file`), then the
    folder's own keys (written to ``path``, by default the record resources/NAME/compare.yaml:
    :func:`ehi.serve.compare_config.own_config`, and ``timed``, the timed tree's section)."""
    own = {**own_config(folder, name, seeds, quick), **(timed or {})}
    path = path or record_path(workdir, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(own, sort_keys=False))
    return [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir),
            "--cores", str(cores), *targets, *(QUIET if quiet else []), "--configfile", str(config_file(quick)),
            str(path), *extra]


def record_path(workdir: Path, name: str) -> Path:
    """The config of the last finished run on ``name``."""
    return workdir / "resources" / name / "compare.yaml"


QUIET = ["--quiet", "rules", "host"]  # the README's command: Snakemake says a line a job (ehi.core.console)
# what reaches the console of Snakemake's: the line a job, the jobs' warnings and errors, and a failure's lines
CONSOLE_LINE = re.compile(r"^\d+ of \d+ steps \(\d+%\) done|\b(WARNING|ERROR)\b|[Ee]rror|Exiting because")


def default_out(folder: Path, name: str) -> Path:
    """Where a comparison runs unless told: ``NAME_compare`` beside the folder it reads."""
    return folder.resolve().parent / f"{name}_compare"


def shown(path: Path) -> str:
    """``path`` relative to the current directory where it lies below it, else absolute."""
    relative = os.path.relpath(path)
    return str(path) if relative.startswith("..") else relative


def outputs(name: str, workdir: Path, index: str, timed: bool = False) -> dict[str, str]:
    """What the run leaves, by what it answers (``index``: the searchable index, under the run's folder)."""
    where = [("claims", f"results/tables/{name}_claims.md"), ("KMR table", f"results/tables/{name}_kmr.md"),
             ("KMR figure", f"results/figures/{name}/kmr_ndcg_at_10.png"), ("index", index)]
    return {what: shown(workdir / path) for what, path in where + [("timed", timed_report(name))] * timed}


def compare(folder: str | os.PathLike, name: str | None = None, cores: int = 2, seeds: list[int] | None = None,
            extra: list[str] = (), out: str | os.PathLike | None = None, quick: bool = False,
            time: bool = False) -> int:
    """Run the comparison on ``folder`` in ``out`` (:func:`default_out`); the pipeline's exit status
    (0: every output written). ``quick``: the frozen study, one seed; ``time``: the timed comparison."""
    folder = Path(folder).expanduser()
    if not (folder / "doc_ids.txt").is_file():
        raise ConfigError(f"{folder} is not a vectors folder (no doc_ids.txt; layout in docs/embeddings.md)")
    if not config_file(quick).is_file() or importlib.util.find_spec("snakemake") is None:
        raise ConfigError("it runs the pipeline of a repository checkout with its extra: "
                          "pip install -e '.[pipeline]' in a clone of the repository")
    if quick and time:
        raise ConfigError("--time times the two-stage tree, which --quick does not train; leave out one of them")
    check_cores(cores)
    check_judgements(folder)
    name = dataset_name(folder, name)
    workdir = Path(out).expanduser().resolve() if out else default_out(folder, name)
    if workdir == REPO or REPO in workdir.parents and workdir.relative_to(REPO).parts[0] in ("results", "resources"):
        raise ConfigError(f"--out {workdir}: the checkout's own results would be written over; name a folder of its own")
    check_results_are_ours(name, folder, workdir)
    with holding_out(workdir):  # before anything of a call running at this --out is touched
        return _run(folder, name, cores, seeds, extra, out, workdir, quick, time)


def _run(folder: Path, name: str, cores: int, seeds, extra, out, workdir: Path, quick: bool, time: bool) -> int:
    """The pipeline run of :func:`compare`, with ``workdir``'s lock held."""
    record, results = record_path(workdir, name), workdir / "results" / name
    dry = "-n" in extra or "--dry-run" in extra  # a dry run lists every job: Snakemake's own console
    # a plan times the tree dev chose where it is trained, else the paper's start on DE's vectors
    timed = timed_section(name, best_two_stage(results) or first_two_stage()) if time and dry else None
    command = snakemake_command(folder.resolve(), name, cores, seeds, list(extra), workdir, pending(record),
                                quiet=not dry, quick=quick, timed=timed,
                                targets=("all", timed_report(name)) if timed else ("all",))
    if dry or "--unlock" in extra:
        status = run_owned(command)
        finish_record(record, False)
        return status
    log_path = workdir / "compare.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    status = run_owned(command, log_path, CONSOLE_LINE.search)
    tree = None if quick else best_two_stage(results) or first_two_stage()
    if status == 0 and time:  # the trees are trained: the two-stage one dev chose is timed
        areas = ", ".join(f"{system} {area:.4f}" for system, area in dev_areas(results).items())
        print(f"timing {tree}, the two-stage tree with the larger dev area ({areas})")
        command = snakemake_command(folder.resolve(), name, cores, seeds, list(extra), workdir, pending(record),
                                    timed=timed_section(name, tree), targets=(timed_report(name),))
        status = run_owned(command, log_path, CONSOLE_LINE.search, append=True)
    finish_record(record, status == 0)
    if status != 0:
        advice = lock_advice(workdir, f"{folder} --out {workdir}" if out else str(folder))
        if advice:
            print(f"ehi compare: {advice}", file=sys.stderr)
        print(f"ehi compare: the pipeline stopped; its whole console: {shown(log_path)}", file=sys.stderr)
        return status
    where = outputs(name, workdir, search_index(name, quick, tree), time)
    for what, path in where.items():
        print(f"{what + ':':<12} {path}")
    queries = next(folder.glob("queries.*"), folder / "queries.npy")
    print(f"search it:   ehi search --index {where['index']} --query-vectors {queries}")
    print(f"log:         {shown(log_path)}")
    from ehi.report.answer import closing_lines  # here: pandas is loaded once the run is over

    for line in closing_lines(workdir, name, where):  # every claim n/a, if so; the answer (OUT/report.md)
        print(line)
    return status


def add_compare_parser(sub) -> None:
    """``ehi compare``'s arguments, on the ``ehi`` command's subparsers."""
    compare = sub.add_parser(
        "compare", help="the index comparison on a folder of precomputed vectors (the pipeline, one command)",
        description="Run the pipeline on config/embeddings_decisive.yaml with DIR (docs/embeddings.md's layout) as "
                    "the dataset: a dual encoder (a linear tower over DIR, its rate chosen on dev), the trees "
                    "trained alone on its frozen vectors and on the vectors as given (the paper's start and the "
                    "floor recipe's), against k-means IVF with as many lists, dev-tuned IVF, ScaNN and HNSW on "
                    "both, routing counted, over three seeds; then print where the claims table, the KMR table "
                    "and figure and the searchable index are. DIR needs train and dev judgements. Everything is "
                    "written under --out.")
    compare.add_argument("folder", metavar="DIR", help="the vectors folder (docs.npy, queries.npy, ids, qrels/)")
    compare.add_argument("--name", default=None, help="the dataset's name in every path (default: DIR's own name)")
    compare.add_argument("--out", metavar="OUT", default=None,
                         help="the folder the run writes in (results/, resources/, logs/; default: NAME_compare beside DIR)")
    compare.add_argument("--cores", type=int, default=2, help="cores the pipeline may use (default: 2)")
    compare.add_argument("--seeds", type=int, nargs="+", default=None, help="training seeds (default: 0 1 2; --quick: 0)")
    compare.add_argument("--quick", action="store_true",
                         help="a first look: the frozen study of config/embeddings.yaml (the trees on the vectors as "
                              "given, no encoder trained), one seed unless --seeds")
    compare.add_argument("--time", action="store_true",
                         help="then time the two-stage tree with the larger dev area, flat and as PQ leaves, against "
                              "HNSW, IVF, ScaNN, ScaNN-AH and IVF-PQ, each tuned on dev, one thread (rule "
                              "trained_benchmark)")
    compare.add_argument("-n", "--dry-run", action="store_true", help="list the jobs, run none")
    compare.add_argument("--unlock", action="store_true",
                         help="remove the lock a killed run left (Snakemake's --unlock), run nothing")
    compare.add_argument("-v", "--verbose", action="store_true", help="show the traceback of an error")
