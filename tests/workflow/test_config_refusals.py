"""The config refusals through `snakemake -n` itself: one line naming the key (and the file that
set it), the file and line, or the `datasets:` entry, with no traceback and nothing written. The
functions behind them are tested case by case in tests/core/test_config_files.py,
test_config_values.py and test_plugin_faults.py, and tests/data/test_manifest.py."""

import json

import pytest
import yaml

from tests.workflow.test_workflow import TEST_CONFIG, snakemake

CASES = [  # (case, config file text layered over the test config, what the one line says)
    ("an unknown top-level key", "trian: {epochs: 1}\n", "config trian: unknown key; did you mean 'train'? (set in "),
    ("a key given twice", "train:\n  epochs: 1\n  epochs: 2\n", ", line 3: key 'train.epochs' is given twice"),
    ("a negative query_split seed", "dataset: {query_split: {seed: -1}}\n", "config dataset.query_split.seed: -1 is less"),
    ("no systems", "search: {systems: []}\n", "config search.systems: [] should be non-empty"),
    ("a bogus select_metric", "train: {select_metric: best}\n", "config train.select_metric: 'best' is not one of"),
    ("an encoder name that is nothing", "encoder: {name: 'not a model'}\n", "config encoder.name: 'not a model'"),
    ("pq_m not dividing the dimension", "search: {pq_m: 5, systems: [ehi+tree-pq]}\n", "config search.pq_m: 5 does not divide"),
    ("an unknown loss", "train: {siamese_loss: hinge}\n", "config train: key 'siamese_loss': 'hinge' is not one of ["),
    ("more IVF lists than documents", "search: {ivf_nlist: [500]}\n", "config search.ivf_nlist: [500] exceed the corpus's 200"),
    ("an alias bomb", "a0: &a0 [x, x]\n" + "".join(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 10)),
     ", line 6: its aliases expand past 100,000 values"),  # a5: 2 x 9^5 values
    ("a seed past what FAISS takes", "train: {seeds: [0, 18446744073709551616]}\n",
     "config train.seeds[1]: 18446744073709551616 is greater than the maximum of 1073741824"),
    ("train.seed not in train.seeds", "train: {seed: 5, seeds: [1, 2]}\n", "config train.seed: 5 is not in train.seeds [1, 2]"),
    ("a work axis without the routing it reads", "evaluation: {budget_axis: work}\n",
     "config evaluation.budget_axis: work reads each query's routing, which only search.budget_cost: work records"),
    ("an error in one datasets entry", "datasets:\n  a: {}\n  b: {train: {heigth: 2}}\n",
     "datasets entry 'b': config train.heigth: unknown key"),
]


def one_line_refusal(proc, workdir, keep=()) -> str:
    said = proc.stdout + proc.stderr
    assert proc.returncode != 0, said[-2000:]
    assert "Traceback" not in said and 'File "' not in said, said[-2000:]
    errors = [line for line in said.splitlines() if "error:" in line]
    assert len(errors) == 1 and len(said.strip().splitlines()) <= 3, said[-2000:]
    left = sorted(str(p.relative_to(workdir)) for p in workdir.rglob("*") if p.is_file() and ".snakemake" not in p.parts)
    assert left == sorted(keep), left  # nothing written
    return errors[0]


@pytest.mark.parametrize("case, text, names", CASES, ids=[c[0] for c in CASES])
def test_a_dry_run_refuses_in_one_line(tmp_path, case, text, names):
    path = tmp_path / "case.yaml"
    path.write_text(text)
    workdir = tmp_path / "work"
    proc = snakemake("-n", "all", "--configfile", TEST_CONFIG, str(path), workdir=workdir, check=False)
    refusal = one_line_refusal(proc, workdir)
    assert names in refusal
    if case in ("an unknown top-level key", "a key given twice", "an alias bomb"):
        assert str(path) in refusal


def test_a_broken_manifest_is_one_line_at_the_dry_run(tmp_path):
    workdir = tmp_path / "work"
    manifest = workdir / "resources" / "test" / "data" / "manifest.json"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(json.dumps({"config": yaml.safe_load(open(TEST_CONFIG))["dataset"], "tables": []}))
    proc = snakemake("-n", "all", "--configfile", TEST_CONFIG, workdir=workdir, check=False)
    refusal = one_line_refusal(proc, workdir, keep=["resources/test/data/manifest.json"])
    assert f"{manifest.relative_to(workdir)}: 'source_files' is missing" in refusal and "delete" in refusal


def _world_config() -> str:
    """The test config with its dataset named by a world that no `worlds:` entry makes."""
    config = yaml.safe_load(open(TEST_CONFIG))
    config["dataset"] = {"name": "test", "world": "nosuch"}
    return yaml.safe_dump(config)


TRAINING_CASES = [  # (case, a config file, whether it stands alone, what the one line says)
    ("an ablation row a training refuses", "ablations: {floor: [{floor: kmeans}]}\n", False,
     "config ablations.floor[0]: floor: kmeans needs select_metric: kmr_auc"),
    ("a NaN rate after a grid's first value", "train: {lr_encoder: {choose: [1.0e-4, .nan]}}\n", False,
     "config train (grid point lr_encoder=nan): key 'lr_encoder': nan is not a finite number"),
    ("a world the config does not make", _world_config(), True,
     "config dataset.world: 'nosuch' is no world of this config's worlds: entries"),
]


@pytest.mark.integration
@pytest.mark.parametrize("case, text, alone, names", TRAINING_CASES, ids=[c[0] for c in TRAINING_CASES])
def test_a_dry_run_refuses_what_a_training_job_would_in_one_line(tmp_path, case, text, alone, names):
    """Each refused at `snakemake -n`, where a training job (or the embeddings preparation, blamed on
    encoder.name) refused it after the DAG was planned."""
    path = tmp_path / "case.yaml"
    path.write_text(text)
    workdir = tmp_path / "work"
    configs = [str(path)] if alone else [TEST_CONFIG, str(path)]
    proc = snakemake("-n", "all", "--configfile", *configs, workdir=workdir, check=False)
    assert names in one_line_refusal(proc, workdir)
