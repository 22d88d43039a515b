"""An ablation row names its variant by its settings, not by the order they were written in: a
reordered row is the same variant (nothing retrained), and the committed variants keep their names."""

import re
from pathlib import Path

import yaml

from ehi.core.config_schema import variant_columns, variant_key_order
from tests.workflow.test_workflow import TEST_CONFIG, snakemake

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
KEY_ORDER = variant_key_order(SCHEMA)


def test_a_reordered_row_is_the_same_variant_in_a_dry_run(tmp_path):
    path = tmp_path / "reordered.yaml"
    path.write_text("ablations:\n  tree_shape:\n    - {branching: 8, height: 1}\n")
    proc = snakemake("-n", "all", "--configfile", TEST_CONFIG, str(path), workdir=tmp_path / "work")
    paths = set(re.findall(r"(?:height|branching)~\d+/(?:height|branching)~\d+", proc.stdout + proc.stderr))
    assert paths == {"height~1/branching~8"}  # the test config's own row, written height first


def test_every_shipped_row_is_already_in_the_canonical_order():
    """So no committed variant directory changes its name (the floor recipe's is spelt in configs)."""
    for config_file in sorted((REPO / "config").rglob("*.yaml")):
        config = yaml.safe_load(config_file.read_text()) or {}
        tables = [config.get("ablations") or {}]
        tables += [entry.get("ablations") or {} for entry in (config.get("datasets") or {}).values() if isinstance(entry, dict)]
        for ablations in tables:
            for name, rows in ablations.items():
                columns = list(dict.fromkeys(key for row in rows for key in row))
                assert variant_columns(columns, KEY_ORDER) == columns, (config_file.name, name)
    assert variant_columns(["floor", "select", "indexer_init", "no_such_key", "lambda_balance"], KEY_ORDER) == [
        "indexer_init", "lambda_balance", "floor", "select", "no_such_key"]


def test_variant_paths_are_written_as_snakemakes_paramspace_writes_them():
    """The Snakefile and the dev-choice report name a row by ehi.core.config_schema.ablation_variants;
    on every shipped ablation table it spells the paths Paramspace spells (committed paths keep their names)."""
    import pandas as pd
    from snakemake.utils import Paramspace

    from ehi.core.config_schema import ablation_variants

    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    defaults = {k: v.get("default") for k, v in schema["properties"]["train"]["properties"].items()}
    seen = 0
    for config_file in sorted((REPO / "config").rglob("*.yaml")):
        config = yaml.safe_load(config_file.read_text()) or {}
        entries = [config] + [e for e in (config.get("datasets") or {}).values() if isinstance(e, dict)]
        for entry in entries:
            train = {**defaults, **(config.get("train") or {}), **(entry.get("train") or {})}
            ablations = entry.get("ablations") or {}
            for name, paths in ablation_variants(ablations, train, KEY_ORDER).items():
                rows = pd.DataFrame(ablations[name])
                table = rows.fillna({k: train[k] for k in rows.columns}).infer_objects()
                table = table[variant_columns(list(rows.columns), KEY_ORDER)]
                assert paths == list(Paramspace(table).instance_patterns), (config_file.name, name)
                seen += 1
    assert seen > 10


def _dataset_entries(config: dict) -> dict[str, dict]:
    """{dataset name: its config}, a `datasets:` entry laid over the shared keys as multi.smk lays it."""
    from ehi.core.multi_config import dataset_configs

    if config.get("datasets"):
        return dataset_configs(config)
    return {(config.get("dataset") or {}).get("name"): config}  # None: a template, named on the command line


def test_shipped_variant_systems_name_rows_whose_results_are_committed():
    """Every shipped evaluation.variant_systems names an ablation row, never its variant path, and each
    row resolves to the variant folder its committed results were written under."""
    from ehi.evaluate.variant_systems import config_variant_paths

    checked = 0
    for config_file in sorted((REPO / "config").rglob("*.yaml")):
        config = yaml.safe_load(config_file.read_text()) or {}
        for name, entry in _dataset_entries(config).items():
            named = (entry.get("evaluation") or {}).get("variant_systems") or {}
            assert not [t for t in named.values() if "~" in t], (config_file.name, name, named)
            results = REPO / "results" / str(name)
            for system, path in config_variant_paths(entry, SCHEMA).items():
                if (results / "significance.parquet").exists():  # a committed run, not a leaf count alone
                    variant, own = path.rsplit("/", 1)
                    assert (results / variant / "per_query" / f"{own}.parquet").exists(), (config_file.name, name, system)
                    checked += 1
    assert checked > 20
