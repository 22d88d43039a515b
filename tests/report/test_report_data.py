"""ehi.report.report_data: the report reads each declared input once, before anything renders, and
the tables are functions of what was read (the committed synthetic results: three seeds, a
variant system, an ablation, training logs and leaves)."""

from collections import Counter
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import yaml

from ehi.core.config_schema import ablation_rows, train_defaults, variant_key_order
from ehi.evaluate.seeds import setting_replicas
from ehi.evaluate.variant_systems import config_variant_paths, parse
from ehi.report.report_data import ReportInputs, ReportSettings
from ehi.report.tables import build_report

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "results" / "synthetic"
SYSTEMS = ("ehi+tree", "ehi+exact")


def synthetic_report() -> tuple[ReportInputs, ReportSettings]:
    """The inputs and settings rule tables has for the committed synthetic results."""
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    schema = REPO / "workflow" / "schemas" / "config.schema.yaml"
    paths = config_variant_paths(config, schema)
    floor = parse(paths)[0].variant
    rows = ablation_rows(config["ablations"], {**train_defaults(schema), **config["train"]}, variant_key_order(schema))
    seeds = setting_replicas(parse(paths), config["train"]["seeds"], 0)
    replicas = [r for rs in seeds.values() for r in rs]
    settings = ReportSettings("synthetic", ("main", floor), {"floor": [floor]}, ("ndcg@10", "recall@100"),
                              (0.05, 0.1, 1.0), SYSTEMS, variant_systems=paths,
                              seed_replicas=seeds, ablation_rows=rows)
    everything = ReportInputs.of_results(RESULTS, replicas)
    ours = {v: logs for v, logs in everything.train_logs.items() if v in settings.variants}
    return ReportInputs(everything.significance, everything.summaries, ours, everything.leaves,
                        everything.ablation_significance), settings


def test_build_report_reads_every_declared_input_exactly_once(tmp_path, monkeypatch):
    reads = Counter()

    def counted(read):
        def wrapper(path, *args, **kwargs):
            reads[Path(path).resolve()] += 1
            return read(path, *args, **kwargs)
        return wrapper

    monkeypatch.setattr(pq, "read_table", counted(pq.read_table))
    monkeypatch.setattr(pd, "read_parquet", counted(pd.read_parquet))
    inputs, settings = synthetic_report()
    declared = [inputs.significance, *inputs.summaries.values(), *(p for ps in inputs.train_logs.values() for p in ps),
                *inputs.leaves.values(), inputs.ablation_significance]
    assert len(inputs.summaries) == 6 and inputs.train_logs and inputs.leaves and inputs.ablation_significance
    build_report(inputs, settings, tmp_path / "tables", tmp_path / "figures")
    assert reads == Counter(Path(p).resolve() for p in declared)
    assert (tmp_path / "tables" / "synthetic_kmr_seeds.csv").exists()
    assert (tmp_path / "tables" / "synthetic_ablation_significance.csv").exists()


def test_report_settings_from_params_by_name():
    class Params:  # a rule's params: evaluation's report keys only where a config sets them
        dataset, variants, ablations, metrics, targets = "d", ["main"], {}, ["ndcg@10"], [0.1]
        ablation_systems, systems, variant_systems, version = ["ehi+tree"], ["ehi+tree"], None, 3

    settings = ReportSettings.from_params(Params())
    assert settings == ReportSettings("d", ("main",), {}, ("ndcg@10",), (0.1,), ("ehi+tree",), systems=("ehi+tree",))
    Params.budget_axis = "work"
    assert ReportSettings.from_params(Params()).budget_axis == "work"
