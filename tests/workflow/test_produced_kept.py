"""Produced data replaced only by its successor (workflow/rules/produced.smk): a collection whose
rebuild fails stays byte for byte, putting the config back rebuilds nothing, a build script edited in
place rebuilds its collection, and a mistyped encoding encoder is refused by the dry run."""

from pathlib import Path

import yaml

from tests.workflow.test_bad_input import refused_dry_run
from tests.workflow.test_workflow import REPO, jobs_of, snakemake

BUILD = """import pathlib, sys
out = pathlib.Path(sys.argv[1]); (out / "qrels").mkdir(parents=True)
(out / "corpus.jsonl").write_text('{"_id": "d1", "title": "", "text": "TEXT"}\\n')
(out / "queries.jsonl").write_text('{"_id": "q1", "text": "a query"}\\n')
(out / "qrels" / "test.tsv").write_text("query-id\\tcorpus-id\\tscore\\nq1\\td1\\t1\\n")
"""


def _contents(folder: Path) -> dict[str, bytes]:
    """Every file of ``folder`` but Snakemake's timestamp, by relative path."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != ".snakemake_timestamp"}


def _build(work: Path, script: str, check=True):
    case = work / "case.yaml"
    case.write_text(yaml.safe_dump({"collections": {"c": {"script": script}}}))
    return snakemake("--cores", "1", "resources/sources/c", "--configfile", str(REPO / "config/config.yaml"),
                     str(case), workdir=work, check=check)


def test_a_failing_rebuild_keeps_the_collection_and_putting_the_config_back_rebuilds_nothing(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "good.py").write_text(BUILD.replace("TEXT", "first"))
    (work / "bad.py").write_text("raise SystemExit(3)\n")
    _build(work, "good.py")
    before = _contents(work / "resources/sources/c")
    assert b"first" in before["corpus.jsonl"]
    failed = _build(work, "bad.py", check=False)
    assert failed.returncode != 0 and "bad.py exited with status 3" in failed.stdout + failed.stderr
    assert _contents(work / "resources/sources/c") == before
    again = _build(work, "good.py")  # the failed job's params are recorded: the job runs, and keeps the folder
    assert "kept as it is" in (work / "logs/collections/c.log").read_text(), again.stderr[-2000:]
    assert _contents(work / "resources/sources/c") == before
    assert not list((work / "resources/sources").glob("*.partial"))


def test_a_build_script_edited_in_place_rebuilds_its_collection(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "good.py").write_text(BUILD.replace("TEXT", "first"))
    _build(work, "good.py")
    case = work / "case.yaml"
    dry = snakemake("-n", "resources/sources/c", "--configfile", str(REPO / "config/config.yaml"), str(case), workdir=work)
    assert "build_collection" not in jobs_of(dry.stdout + dry.stderr)
    (work / "good.py").write_text(BUILD.replace("TEXT", "second"))
    dry = snakemake("-n", "resources/sources/c", "--configfile", str(REPO / "config/config.yaml"), str(case), workdir=work)
    assert "build_collection" in jobs_of(dry.stdout + dry.stderr)
    _build(work, "good.py")
    assert b"second" in (work / "resources/sources/c/corpus.jsonl").read_bytes()


def test_a_mistyped_encoding_encoder_is_refused_by_the_dry_run_naming_the_entry(tmp_path):
    said = refused_dry_run(tmp_path, {"encodings": {"e": {"collection": "resources/sources/x",
                                                          "encoder": "./no/such/encoder"}}})
    assert "config encodings.e.encoder: './no/such/encoder': no such folder" in said


def test_a_failing_dev_choice_keeps_its_table_and_the_next_run_renders_it_again(tmp_path):
    import pandas as pd

    work = tmp_path / "work"
    work.mkdir()
    (work / "case.yaml").write_text(yaml.safe_dump({
        "datasets": {"a": {"dataset": {"name": "a", "source": "synthetic"}},
                     "b": {"dataset": {"name": "b", "source": "synthetic"}, "train": {"lr_encoder": 0.001}}},
        "search": {"systems": ["de+exact"]}, "ablation_systems": ["de+exact"]}))
    logs = {n: {v: work / f"results/{n}/{v}/train_log/de.parquet"
                for v in ("main", "lambda_indexing~0.0", "height~1/branching~8")} for n in "ab"}  # the test config's rows
    for n, paths in logs.items():
        for path in paths.values():
            path.parent.mkdir(parents=True)
            pd.DataFrame({"epoch": [0, 1], "dev_ndcg@10": [0.1, 0.2 if n == "a" else 0.3]}).to_parquet(path)
    table = work / "results/tables/dev_choice_a+b.md"
    args = (str(table.relative_to(work)), "--allowed-rules", "dev_choice", "--cores", "1",
            "--configfile", str(REPO / "config/test/test.yaml"), str(work / "case.yaml"))
    snakemake(*args, workdir=work)
    before = {p: p.read_bytes() for p in (table, table.with_suffix(".csv"))}
    logs["b"]["main"].write_bytes(b"not parquet")
    assert snakemake(*args, workdir=work, check=False).returncode != 0
    assert {p: p.read_bytes() for p in before} == before
    pd.DataFrame({"epoch": [0, 1], "dev_ndcg@10": [0.1, 0.05]}).to_parquet(logs["b"]["main"])
    dry = snakemake("-n", *args, workdir=work)
    assert "dev_choice" in jobs_of(dry.stdout + dry.stderr)  # the failed job is done again
    snakemake(*args, workdir=work)
    assert "| a         | main" in table.read_text() and table.read_bytes() != before[table]


def test_scifact_rendered_without_its_ablation_config_is_refused_and_keeps_every_table_and_figure(tmp_path):
    """The README's SciFact command names config/scifact.yaml alone; its committed figures and
    tables also hold config/scifact_dexml.yaml's L_siamese ablation rows."""
    import shutil

    work = tmp_path / "work"
    shutil.copytree(REPO / "results" / "scifact", work / "results" / "scifact")
    shutil.copytree(REPO / "results" / "figures" / "scifact", work / "results" / "figures" / "scifact")
    (work / "results" / "tables").mkdir()
    for path in (REPO / "results" / "tables").glob("scifact_*"):
        shutil.copy(path, work / "results" / "tables")
    (work / "config").symlink_to(REPO / "config")
    before = {p: p.read_bytes() for p in sorted((work / "results").rglob("*")) if p.is_file()}
    proc = snakemake("--cores", "1", "tables", "--configfile", "config/scifact.yaml", workdir=work, check=False)
    assert proc.returncode != 0
    assert "ablation_siamese_loss.png would be dropped: this config lacks the rows it shows" in proc.stdout + proc.stderr
    assert {p: p.read_bytes() for p in sorted((work / "results").rglob("*")) if p.is_file()} == before


def test_a_dataset_named_after_another_datasets_table_is_refused_by_the_dry_run(tmp_path):
    """What `ehi compare DIR --name synthetic_ablation` runs: its significance table is synthetic's."""
    work = tmp_path / "work"
    (work / "results" / "synthetic").mkdir(parents=True)
    (work / "case.yaml").write_text(yaml.safe_dump({"dataset": {"name": "synthetic_ablation"}}))
    proc = snakemake("-n", "all", "--configfile", str(REPO / "config/config.yaml"), str(work / "case.yaml"),
                     workdir=work, check=False)
    said = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "Traceback" not in said
    assert "its table results/tables/synthetic_ablation_significance.* is dataset 'synthetic''s" in said
