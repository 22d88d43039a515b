"""Config names follow the registries: a plugin's loss or dataset source passes the parse-time
checks with the shipped schema (no schema edit), an unknown one is refused in one line listing
the known names, the loss names the checks read agree with the loss registry, and the source table
names its parsers as strings that resolve, so the checks import neither (no torch at parse time)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ehi.config_checks import check_config
from ehi.core.plugins import resolve
from ehi.train.losses import names as loss_names
from tests.plugins.loading import PLUGIN_DIR, loaded_plugin
from tests.test_config_checks import SCHEMA, config, refused

REPO = Path(__file__).resolve().parents[1]
PLUGIN = "ehi_toy_loss_source"
BUILTIN_LOSSES = "triplet, infonce, softmax, decoupled_softmax, soft_topk"
BUILTIN_SOURCES = "synthetic, beir, embeddings, scifact, fiqa, nfcorpus, msmarco, nq320k, lf-amazontitles-131k"


@pytest.fixture
def toy_plugin(monkeypatch):
    """The toy plugin loaded into this process; its registrations removed afterwards."""
    from ehi.data import sources
    from ehi.train.losses import registry

    with loaded_plugin(monkeypatch, PLUGIN, [(registry.SIAMESE_LOSSES, "toy-hinge"), (loss_names._TARGETS, "toy-hinge"),
                                             (sources.SOURCES, "toy-beir")]):
        yield


def beir_copy(root: Path, splits=("train", "dev", "test")) -> Path:
    (root / "qrels").mkdir(parents=True)
    for split in splits:
        (root / "qrels" / f"{split}.tsv").write_text("query-id\tcorpus-id\tscore\n")
    return root


def test_a_plugin_loss_and_source_pass_the_checks_with_the_shipped_schema(toy_plugin, tmp_path):
    toy = {"dataset": {"name": "toy", "source": "toy-beir", "path": str(beir_copy(tmp_path / "toy"))},
           "train": {"siamese_loss": "toy-hinge"}, "ablations": {"loss": [{"siamese_loss": "triplet"}]}}
    check_config(config(toy), SCHEMA)  # config() validates against the schema as the Snakefile does
    check_config(config({"ablations": {"loss": [{"siamese_loss": "toy-hinge"}]}}), SCHEMA)
    # the source's facts come from its Source: a BEIR copy read locally, nothing to download
    assert "config dataset.path: source 'toy-beir' reads a local copy and downloads nothing" \
        in refused(config({"dataset": {"source": "toy-beir"}}))
    why = refused(config({"dataset": {"name": "toy", "source": "toy-beir", "path": str(beir_copy(tmp_path / "nodev", ("train", "test")))}}))
    assert why.startswith("config search.tune_split: dataset 'toy' has no 'dev' queries according to the qrels files")
    # and the job-time side takes the same name
    from ehi.train.config import TrainConfig
    from ehi.train.losses.registry import SIAMESE_LOSSES

    assert TrainConfig.from_dict({"siamese_loss": "toy-hinge"}).siamese_loss == "toy-hinge"
    assert SIAMESE_LOSSES["toy-hinge"] is resolve(loss_names.loss_targets()["toy-hinge"])


def test_the_dry_run_schedules_a_plugin_loss_and_source(tmp_path):
    toy = tmp_path / "toy.yaml"
    toy.write_text(f"dataset: {{name: toy, source: toy-beir, path: {beir_copy(tmp_path / 'copy')}}}\n"
                   "train: {siamese_loss: toy-hinge}\nablations: {}\n")
    env = {**os.environ, "EHI_PLUGINS": PLUGIN, "HF_HUB_OFFLINE": "1",
           "PYTHONPATH": os.pathsep.join([str(PLUGIN_DIR), str(REPO), os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(tmp_path / "work"),
           "-n", "train_all", "--configfile", str(REPO / "config" / "test" / "test.yaml"), str(toy)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    assert "train_ehi" in proc.stdout and "prepare_data" in proc.stdout


def test_an_unknown_loss_or_source_is_one_line_listing_the_known_names():
    # the registry's names, checked by TrainConfig's field (each ablation row's too)
    assert refused(config({"train": {"siamese_loss": "hinge"}})) == \
        f"config train: key 'siamese_loss': 'hinge' is not one of {sorted(BUILTIN_LOSSES.split(', '))}"
    assert refused(config({"ablations": {"loss": [{"siamese_loss": "triplet"}, {"siamese_loss": "hinge"}]}})) == \
        f"config ablations.loss[1]: key 'siamese_loss': 'hinge' is not one of {sorted(BUILTIN_LOSSES.split(', '))}"
    assert refused(config({"dataset": {"source": "scifcat"}})) == \
        f"config dataset.source: unknown source 'scifcat'; known: {BUILTIN_SOURCES}, or ir_datasets:<id>"


def test_a_refusal_lists_the_plugins_names_too(toy_plugin):
    assert refused(config({"train": {"siamese_loss": "hinge"}})).endswith(
        f"is not one of {sorted([*BUILTIN_LOSSES.split(', '), 'toy-hinge'])}")
    assert f"known: {BUILTIN_SOURCES}, toy-beir, or ir_datasets:<id>" in refused(config({"dataset": {"source": "scifcat"}}))


def test_a_registered_name_is_never_taken_twice_nor_outside_the_schema_form():
    from ehi.data.sources import SOURCES, register_source
    from ehi.train.losses.registry import register_siamese_loss

    with pytest.raises(ValueError, match="already registered"):
        register_siamese_loss("triplet", lambda pos, neg, mask, **kw: pos.sum())
    with pytest.raises(ValueError, match="lower-case letters"):
        register_siamese_loss("Hinge", lambda pos, neg, mask, **kw: pos.sum())
    with pytest.raises(ValueError, match="already registered"):
        register_source(SOURCES["scifact"])
    assert "Hinge" not in loss_names.siamese_loss_names()


def test_the_name_tables_are_the_registries():
    from ehi.train.losses.registry import SIAMESE_LOSSES

    targets = loss_names.loss_targets()
    assert tuple(targets) == tuple(SIAMESE_LOSSES)
    for name, target in targets.items():
        assert resolve(target) is SIAMESE_LOSSES[name], name


def test_every_source_parser_resolves_to_a_parser_of_a_local_directory():
    import inspect

    from ehi.data.sources import SOURCES

    for name, source in SOURCES.items():
        parser = resolve(source.parser)
        assert callable(parser) and "name" in inspect.signature(parser).parameters, name
    assert [n for n, s in SOURCES.items() if s.beir_layout] == ["beir", "scifact", "fiqa", "nfcorpus"]


def test_a_source_parser_is_a_module_function_string():
    from ehi.data.beir import load_beir
    from ehi.data.sources import BEIR_LAYOUT, Source, register_source

    with pytest.raises(ValueError, match="'module:function' string"):
        register_source(Source("callable-parser", load_beir, BEIR_LAYOUT, "corpus.jsonl"))


def test_the_checks_import_neither_torch_nor_the_heavy_registries_nor_the_parsers():
    code = ("import sys, yaml; from snakemake.utils import validate; from ehi.config_checks import check_config; "
            f"cfg = yaml.safe_load(open({str(REPO / 'config' / 'test' / 'test.yaml')!r})); validate(cfg, {str(SCHEMA)!r}); "
            f"check_config(cfg, {str(SCHEMA)!r}); "
            "heavy = [m for m in ('torch', 'ehi.train.losses.registry', 'ehi.data.beir', 'ehi.data.download') if m in sys.modules]; "
            "assert not heavy, heavy")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("EHI_PLUGINS", None)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
