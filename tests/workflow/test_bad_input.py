"""Bad input through Snakemake itself: every case that used to pass `snakemake -n` and fail in a job
after training is refused by the dry run, naming the key, with no traceback and nothing written; a
data error in a rule is one line in its log; a changed source is named and deleting the manifest
prepares the dataset again. Dry runs only, except two tiny data-stage runs."""

import json
from pathlib import Path

import pytest
import yaml

from tests.workflow.test_workflow import TEST_CONFIG, jobs_of, snakemake

# (case, config layered over the test config, what the refusal names)
CHECKED_ONLY_AFTER_TRAINING = [
    ("beams beyond B^H", {"search": {"ehi_beams": [1, 4, 17]}}, "config search.ehi_beams: [17] exceed"),
    ("an evaluated split without queries", {"dataset": {"synthetic": {"split_fractions": [0.8, 0.2, 0.0]}}},
     "config evaluation.split: dataset 'test' has no 'test' queries"),
    ("an unknown metric cutoff", {"evaluation": {"metrics": ["ndcg@10", "ndcg@ten"]}}, "config evaluation.metrics: 'ndcg@ten'"),
    ("an unknown metric", {"evaluation": {"metrics": ["foo@10"]}}, "config evaluation.metrics: 'foo@10'"),
    ("a ranking shallower than a metric's cutoff", {"search": {"k": 1}},
     "config search.k: 1 is below the cutoffs of mrr@10, ndcg@10, recall@10, recall@100 in evaluation.metrics"),
    ("an ablation row of height 0", {"ablations": {"bad": [{"height": 0}]}}, "config ablations.bad[0].height: 0 is less"),
    ("an ablation row of 'three' epochs", {"ablations": {"bad": [{"epochs": "three"}]}},
     "config ablations.bad[0].epochs: 'three' is not of type 'integer'"),
    ("a diagnostic beam beyond B^H", {"train": {"diagnostic_beam": 99}}, "config train.diagnostic_beam: 99 exceeds"),
    ("more leaves than documents", {"train": {"height": 4}}, "256 leaves, more than the corpus's 200 documents"),
    ("a FAISS factory FAISS cannot build", {"search": {"faiss_factories": {"mine": "IVF{nlist},PQ7"}}},
     "config search.faiss_factories.mine: FAISS cannot build 'IVF{nlist},PQ7' by inner product over the embeddings' 32"),
    ("tuning on the evaluated split", {"search": {"tune_split": "test"}}, "config search.tune_split: 'test' is also evaluation.split"),
    ("a variant system of an undefined ablation row", {"evaluation": {"variant_systems": {"ehi-warm+tree": "stabiliser/ehi+tree"}}},
     "config evaluation.variant_systems.ehi-warm+tree: 'stabiliser' names no ablation row (a table of one row by its "
     "name, else <table>[i]); known: tree_shape, loss_terms"),
]


def refused_dry_run(tmp_path: Path, override: dict) -> str:
    case = tmp_path / "case.yaml"
    case.write_text(yaml.safe_dump(override))
    workdir = tmp_path / "work"
    proc = snakemake("-n", "all", "--configfile", TEST_CONFIG, str(case), workdir=workdir, check=False)
    said = proc.stdout + proc.stderr
    assert proc.returncode != 0, said[-2000:]
    assert "Traceback" not in said and 'File "' not in said, said[-2000:]
    assert not any(p.name != ".snakemake" for p in workdir.iterdir()), sorted(workdir.iterdir())  # nothing written
    return said


@pytest.mark.parametrize("case, override, names", CHECKED_ONLY_AFTER_TRAINING, ids=[c[0] for c in CHECKED_ONLY_AFTER_TRAINING])
def test_dry_run_refuses_what_used_to_fail_after_training(tmp_path, case, override, names):
    assert names in refused_dry_run(tmp_path, override)


def write_beir(root: Path, corpus_text=None) -> Path:
    """A tiny BEIR copy without a dev split: q0..q3 judge d0..d3 in train, q4 judges d4 in test."""
    (root / "qrels").mkdir(parents=True)
    docs = corpus_text or "".join(json.dumps({"_id": f"d{i}", "text": f"doc {i}"}) + "\n" for i in range(40))
    (root / "corpus.jsonl").write_text(docs)
    (root / "queries.jsonl").write_text("".join(json.dumps({"_id": f"q{i}", "text": f"query {i}"}) + "\n" for i in range(5)))
    for split, queries in (("train", range(4)), ("test", [4])):
        rows = "".join(f"q{i}\td{i}\t1\n" for i in queries)
        (root / "qrels" / f"{split}.tsv").write_text("query-id\tcorpus-id\tscore\n" + rows)
    return root


def test_a_beir_copy_without_dev_under_the_default_tune_split(tmp_path):
    beir = {"dataset": {"name": "mine", "source": "beir", "path": str(write_beir(tmp_path / "copy"))}}
    said = refused_dry_run(tmp_path, beir)
    assert "config search.tune_split: dataset 'mine' has no 'dev' queries" in said and "dataset.dev_fraction" in said


def test_a_data_error_in_a_rule_is_one_line_in_its_log_and_leaves_nothing(tmp_path):
    broken = '{"_id": "d0", "text": "a"}\n{"_id": "d1", "text": "unterminated\n'
    source = write_beir(tmp_path / "copy", corpus_text=broken)
    case = tmp_path / "case.yaml"
    case.write_text(yaml.safe_dump({"dataset": {"name": "mine", "source": "beir", "path": str(source), "dev_fraction": 0.5}}))
    workdir = tmp_path / "work"
    proc = snakemake("data", "--cores", "1", "--configfile", TEST_CONFIG, str(case), workdir=workdir, check=False)
    said = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "Traceback" not in said
    message = f"{source / 'corpus.jsonl'}, line 2: malformed JSON"
    # the log Snakemake points at says it, in one line after the job's own "code at git commit" line
    log = [line for line in (workdir / "logs" / "mine" / "prepare_data.log").read_text().splitlines()
           if "code at git commit" not in line]
    assert len(log) == 1 and message in log[0] and "ERROR" in log[0]
    assert sum(message in line for line in said.splitlines()) == 1
    assert not any((workdir / "resources" / "mine" / "data").glob("*"))  # no table, no manifest


def test_a_changed_source_is_named_and_deleting_the_manifest_prepares_again(tmp_path):
    source = write_beir(tmp_path / "copy")
    case = tmp_path / "case.yaml"
    case.write_text(yaml.safe_dump({"dataset": {"name": "mine", "source": "beir", "path": str(source), "dev_fraction": 0.5}}))
    workdir, args = tmp_path / "work", ("--cores", "1", "--configfile", TEST_CONFIG, str(case))
    snakemake("data", *args, workdir=workdir)
    manifest = workdir / "resources" / "mine" / "data" / "manifest.json"
    assert manifest.is_file()
    with (source / "corpus.jsonl").open("a") as fh:  # the source corrected (here: one more document)
        fh.write(json.dumps({"_id": "d40", "text": "doc 40"}) + "\n")
    proc = snakemake("-n", "data", *args, workdir=workdir, check=False)  # refused, not "Nothing to be done"
    said = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "Traceback" not in said
    assert "changed since it was prepared" in said and f"source file {source / 'corpus.jsonl'}" in said
    manifest.unlink()  # as the message advises
    assert "prepare_data" in jobs_of(snakemake("-n", "data", *args, workdir=workdir).stdout)
    snakemake("data", *args, workdir=workdir)
    assert json.loads(manifest.read_text())["source_files"][str(source / "corpus.jsonl")]["bytes"] == \
        (source / "corpus.jsonl").stat().st_size  # regenerated, of the corrected copy


def test_a_dev_fraction_on_a_copy_that_ships_dev_is_refused_by_the_dry_run(tmp_path):
    source = write_beir(tmp_path / "copy")
    (source / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nq3\td3\t1\n")
    said = refused_dry_run(tmp_path, {"dataset": {"name": "mine", "source": "beir", "path": str(source), "dev_fraction": 0.5}})
    assert "config dataset.dev_fraction: 0.5, but dataset 'mine' ships a 'dev' split" in said


def test_a_config_that_fails_in_prepare_data_leaves_the_prepared_dataset_as_it_was(tmp_path):
    good, broken = write_beir(tmp_path / "copy"), write_beir(tmp_path / "broken", corpus_text='{"_id": "d0", "text\n')
    workdir, configs = tmp_path / "work", {}
    for name, source in (("good", good), ("broken", broken)):
        configs[name] = tmp_path / f"{name}.yaml"
        configs[name].write_text(yaml.safe_dump({"dataset": {"name": "mine", "source": "beir", "path": str(source),
                                                             "dev_fraction": 0.5}}))
    snakemake("data", "--cores", "1", "--configfile", TEST_CONFIG, str(configs["good"]), workdir=workdir)
    data = workdir / "resources" / "mine" / "data"

    def state():
        return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(data.iterdir())}

    before = state()
    proc = snakemake("data", "--cores", "1", "--configfile", TEST_CONFIG, str(configs["broken"]), workdir=workdir, check=False)
    assert proc.returncode != 0 and "malformed JSON" in proc.stdout + proc.stderr
    assert state() == before  # the same bytes and times: nothing after it is rerun
    again = snakemake("-n", "data", "--cores", "1", "--configfile", TEST_CONFIG, str(configs["good"]), workdir=workdir)
    assert "Nothing to be done" in again.stdout + again.stderr
