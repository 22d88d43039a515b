"""`snakemake tables` after the ablations ran: ablation tests made before the ablation variants had
results (a report-only run renders from what is cached) are made again, and a table without tests
says what is true of the variants with results, never "No ablation variant has results yet" beside
them."""

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from ehi.core.io import read_table, write_table
from ehi.core.schemas import schema
from ehi.evaluate.metrics import summarize
from ehi.report.report_data import ReportInputs, ReportSettings
from ehi.report.report_files import untested_ablation_variants
from ehi.report.tables import build_report
from tests.evaluate.test_result_checks import SYSTEMS, ablation_tests_of, write_results

REPO = Path(__file__).resolve().parents[2]


def test_tests_made_before_a_variant_ran_are_stale(tmp_path):
    paths = write_results(tmp_path)
    tests = tmp_path / "ablation_significance.parquet"
    ablation_tests_of({"main": paths["main"]}, tests)  # made while only the main setting had results
    assert read_table(tests).empty
    assert untested_ablation_variants(tests, paths) == ["height~1"]
    ablation_tests_of(paths, tests)
    assert untested_ablation_variants(tests, paths) == []
    assert untested_ablation_variants(tests, {"main": paths["main"], "height~2": [tmp_path / "none.parquet"]}) == []


def test_a_report_with_variant_results_and_no_tests_says_so(tmp_path):
    results = tmp_path / "d"
    paths = write_results(results)
    for variant, files in paths.items():
        write_table(summarize(pd.concat(map(read_table, files))).assign(qps=1.0), "summary",
                    results / variant / "summary.parquet")
    write_table(pd.DataFrame(columns=schema("significance").names), "significance", results / "significance.parquet")
    ablation_tests_of({"main": paths["main"]}, results / "ablation_significance.parquet")
    settings = ReportSettings("d", ("main", "height~1"), {"shape": ["height~1"]}, ("ndcg@10",), (0.05, 1.0), SYSTEMS,
                              ablation_rows={"shape": [{"height": "1"}]})
    build_report(ReportInputs.of_results(results, settings.variants), settings, tmp_path / "t", tmp_path / "f")
    shown = (tmp_path / "t" / "d_ablations.md").read_text()
    assert "height~1" in shown
    said = (tmp_path / "t" / "d_ablation_significance.md").read_text()
    assert "No ablation variant has results yet" not in said and "(height~1)" in said
    # the main significance table is empty too: EHI ran beside no baseline here, and it says so
    assert "no EHI search with a baseline" in (tmp_path / "t" / "d_significance.md").read_text()


@pytest.mark.integration
def test_tables_after_the_ablations_ran_makes_their_tests_again(tmp_path):
    """A dry run of `snakemake tables` over cached results whose ablation tests hold none of the
    ablation variants that have per-query tables schedules rule ablation_significance."""
    from ehi.core.config_schema import ablation_variants, train_defaults, variant_key_order

    schema_path = REPO / "workflow" / "schemas" / "config.schema.yaml"
    config_path = REPO / "config" / "test" / "test.yaml"
    config = yaml.safe_load(config_path.read_text())
    variants = [v for vs in ablation_variants(config["ablations"], {**train_defaults(schema_path), **config["train"]},
                                              variant_key_order(schema_path)).values() for v in vs]
    results = tmp_path / "results" / "test"
    paths = write_results(results, ("main", *variants))
    write_table(pd.DataFrame(columns=schema("significance").names), "significance", results / "significance.parquet")
    ablation_tests_of({"main": paths["main"]}, results / "ablation_significance.parquet")
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory",
                           str(tmp_path), "-n", "tables", "--configfile", str(config_path)],
                          capture_output=True, text=True, env=env, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert "rule ablation_significance:" in out or "ablation_significance " in out.split("Job stats:")[-1], out[-3000:]
