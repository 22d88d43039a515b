"""Worlds, towers and gain tables are jobs of the DAG (workflow/rules/produced.smk, gain.smk): a
fresh clone's dry run of the scale study plans every world and its gain tables, the joint pilot's
its tower too; a tiny world and a tower over
it are written by those rules and prepared as a dataset; a world knob unknown or out of range is
refused by the dry run, naming the entry."""

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from tests.workflow.test_bad_input import refused_dry_run
from tests.workflow.test_workflow import REPO, jobs_of, snakemake


def job_counts(dry_run_output: str) -> dict[str, int]:
    """{rule: jobs} of a dry run's job-stats table."""
    return {name: int(n) for name, n in re.findall(r"^(\S+)\s+(\d+)$", dry_run_output, re.M)
            if name in jobs_of(dry_run_output)}


@pytest.mark.parametrize("config, producers", [
    ("config/scale_study.yaml", {"vector_world": 5, "gain_table": 1, "gain_scaling": 1, "world_1e6__data_facts": 1}),
    ("config/scale_joint.yaml", {"vector_world": 1, "write_tower": 1}),
    ("config/nfcorpus.yaml", {"build_collection": 1}),  # the view of the shared copy it trains on
])
def test_a_fresh_clone_plans_the_worlds_towers_and_gain_tables_as_jobs(tmp_path, config, producers):
    """The config's own results absent: every world, tower and gain table is a planned job. The
    scale study's gain reads the frozen collections another config committed, as on a clone."""
    for other in (yaml.safe_load((REPO / config).read_text()).get("gain") or {}).get("other_datasets", {}):
        shutil.copytree(REPO / "results" / other, tmp_path / "results" / other)
    (tmp_path / "config").symlink_to(REPO / "config")  # gain.other_datasets name configs from the checkout
    proc = snakemake("-n", "all", "--configfile", str(REPO / config), workdir=tmp_path)
    counts = job_counts(proc.stdout + proc.stderr)
    assert {rule: counts.get(rule) for rule in producers} == producers
    assert not (tmp_path / "resources").exists()  # planned, nothing written


def test_the_trained_benchmark_is_a_job_over_the_trees_it_times(tmp_path):
    """config/webster.yaml's trained_benchmark: a fresh clone's dry run of its table trains the two
    trees it names (seed 0, the paper's start and the floor recipe) and nothing else of the study."""
    (tmp_path / "config").symlink_to(REPO / "config")
    proc = snakemake("-n", "results/benchmarks/trained_webster/trained.md", "--configfile",
                     str(REPO / "config/webster.yaml"), workdir=tmp_path)
    counts = job_counts(proc.stdout + proc.stderr)
    assert {r: counts.get(r) for r in ("trained_benchmark", "webster__train_ehi", "webster__ehi_index",
                                       "webster__search")} == {"trained_benchmark": 1, "webster__train_ehi": 2,
                                                               "webster__ehi_index": 2, "webster__search": None}


def test_a_one_dataset_configs_trained_benchmark_times_the_ablation_row_it_names(tmp_path):
    """config/webster_joint.yaml's trained_benchmark names its tree by ablation row (two_stage[0], the
    tree trained alone on DE's frozen vectors): a fresh clone's dry run trains DE, then that tree."""
    (tmp_path / "config").symlink_to(REPO / "config")
    proc = snakemake("-n", "results/benchmarks/trained_webster_joint/trained.md", "--configfile",
                     str(REPO / "config/webster_joint.yaml"), workdir=tmp_path)
    counts = job_counts(proc.stdout + proc.stderr)
    assert {r: counts.get(r) for r in ("trained_benchmark", "train_de", "train_ehi", "ehi_index", "search")} == {
        "trained_benchmark": 1, "train_de": 2, "train_ehi": 1, "ehi_index": 1, "search": None}
    assert "freeze_layers~1/ehi/index" in proc.stdout


def test_configs_name_no_hand_step():
    """No config comment asks for a `python -m` or `python -c` command that writes what a dataset reads."""
    typed = [f"{p.name}:{i}" for p in sorted((REPO / "config").rglob("*.yaml"))
             for i, line in enumerate(p.read_text().splitlines(), 1) if re.search(r"python3? -[mc]\b.*resources/", line)]
    assert not typed


def test_a_world_and_a_tower_over_it_are_written_by_rules_prepared_and_described(tmp_path):
    knobs = {"n_docs": 60, "dim": 8, "n_topics": 2, "subtopics_per_topic": 2, "n_train": 10, "n_dev": 5, "n_test": 5}
    case = tmp_path / "tiny.yaml"
    case.write_text(yaml.safe_dump({
        "worlds": {"tiny": knobs},
        "towers": {"tiny_linear": {"vectors": "resources/worlds/tiny", "kind": "linear"}},
        "dataset": {"name": "tiny", "source": "embeddings", "path": "resources/worlds/tiny"},
        "encoder": {"name": "resources/towers/tiny_linear"},
    }))
    work = tmp_path / "work"
    snakemake("--cores", "1", "data", "results/tiny/data.json", "--configfile", str(REPO / "config" / "config.yaml"),
              str(case), workdir=work)
    world = json.loads((work / "resources/worlds/tiny/embeddings.json").read_text())["world"]
    assert {k: world[k] for k in knobs} == knobs
    tower = json.loads((work / "resources/towers/tiny_linear/tower.json").read_text())
    assert tower["kind"] == "linear" and Path(tower["vectors"]) == (work / "resources/worlds/tiny").resolve()
    prepared = json.loads((work / "resources/tiny/data/manifest.json").read_text())
    assert prepared["queries_per_split"] == {"train": 10, "dev": 5, "test": 5}
    facts = json.loads((work / "results/tiny/data.json").read_text())  # what the gain tables read
    assert facts["documents"] == 60 and facts["queries_per_split"] == prepared["queries_per_split"]
    assert facts["world"] == world


@pytest.mark.parametrize("knobs, says", [
    ({"n_doc": 10}, "unknown vector world key(s) ['n_doc']"),
    ({"dim": 0}, "vector world dim: 0 is below 1"),  # a world data accepted, on which FAISS died of SIGFPE
    ({"n_docs": 10 ** 12}, "vector world n_docs/dim/queries: generating 1000000000000 x 384 needs"),  # before allocating
])
def test_a_world_knob_unknown_or_out_of_range_is_refused_by_the_dry_run(tmp_path, knobs, says):
    said = refused_dry_run(tmp_path, {"worlds": {"typo": knobs}})
    assert f"worlds entry 'typo': {says}" in said


def test_a_beir_view_renames_qrels_splits_without_copying(tmp_path):
    import importlib.util

    from tests.workflow.test_bad_input import write_beir

    spec = importlib.util.spec_from_file_location("beir_view", REPO / "workflow" / "collections" / "beir_view.py")
    view = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(view)
    source = write_beir(tmp_path / "copy")
    view.make_view(tmp_path / "view", source, {"dev": "train", "test": "test"})
    assert sorted(p.name for p in (tmp_path / "view" / "qrels").iterdir()) == ["dev.tsv", "test.tsv"]
    assert (tmp_path / "view" / "qrels" / "dev.tsv").read_text() == (source / "qrels" / "train.tsv").read_text()
    assert (tmp_path / "view" / "corpus.jsonl").is_symlink()
    with pytest.raises(SystemExit, match="not found"):
        view.make_view(tmp_path / "other", source, {"train": "dev"})
