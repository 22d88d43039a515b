"""The parse-time checks of a prepared dataset run at `snakemake -n`: its manifest is recognised as
this config's, so its size and splits are judged before any training job is scheduled."""

import yaml

from tests.workflow.test_bad_input import write_beir
from tests.workflow.test_workflow import TEST_CONFIG, snakemake


def test_a_prepared_collection_too_small_for_the_tree_is_refused_at_the_dry_run(tmp_path):
    six = "".join(f'{{"_id": "d{i}", "text": "doc {i}"}}\n' for i in range(6))
    source = write_beir(tmp_path / "copy", corpus_text=six)
    case = tmp_path / "case.yaml"
    case.write_text(yaml.safe_dump({"dataset": {"name": "six", "source": "beir", "path": str(source), "dev_fraction": 0.5}}))
    workdir = tmp_path / "work"
    snakemake("data", "--cores", "1", "--configfile", TEST_CONFIG, str(case), workdir=workdir)
    before = sorted(p.relative_to(workdir) for p in workdir.rglob("*") if ".snakemake" not in p.parts)
    proc = snakemake("-n", "all", "--configfile", TEST_CONFIG, str(case), workdir=workdir, check=False)
    said = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "Traceback" not in said, said[-2000:]
    assert "config train.height=2, train.branching=4: 16 leaves, more than the corpus's 6 documents" in said
    assert sorted(p.relative_to(workdir) for p in workdir.rglob("*") if ".snakemake" not in p.parts) == before
