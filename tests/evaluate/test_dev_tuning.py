"""ehi.evaluate.dev_tuning: the dev record of every setting tried (epochs kept, selected encoders
against IVF on the same embeddings)."""

from pathlib import Path

import numpy as np
import pandas as pd
import torch

from ehi.evaluate.variant_systems import config_settings
from ehi.core.config_files import read_config_file
from ehi.core.multi_config import merged
from ehi.evaluate.dev_tuning import joint_epochs, main, selected_epoch, selected_models, training_logs
from ehi.model.tree_init import kmeans_init_
from ehi.model.tree import TreeIndexer
from ehi.search.tree_index import EHIIndex
from ehi.train.dev_eval import ranking_metrics, top_rows
from ehi.train.selection import best_epoch
from ehi.evaluate.tree_recipe import split_arrays

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
# the configs SciFact's committed runs were made with: the recipe and its DEXML-loss ablation
SCIFACT = merged(read_config_file(REPO / "config" / "scifact.yaml"), read_config_file(REPO / "config" / "scifact_dexml.yaml"))


def test_selected_epoch_is_the_first_best_and_the_last_when_nothing_was_judged():
    ehi = pd.DataFrame({"epoch": [0, 1, 2, 3], "dev_ndcg@10": [0.1, 0.9, 0.9, 0.9],
                        "dev_tree_ndcg@10": [0.2, 0.5, 0.6, 0.6]})
    assert selected_epoch(ehi) == 2  # EHI is selected on its tree, ties go to the earlier epoch
    assert selected_epoch(ehi.drop(columns="dev_tree_ndcg@10")) == 1
    assert selected_epoch(pd.DataFrame({"epoch": [1, 2, 3], "loss": [0.3, 0.2, 0.1]})) == 3


def test_the_committed_scifact_logs_mark_the_epochs_the_runs_kept():
    epochs = joint_epochs(training_logs(REPO / "results" / "scifact", config_settings(SCIFACT, SCHEMA)))
    kept = epochs[epochs.selected == "yes"].set_index("run").epoch
    # what the runs' train_summary.json say (B=288): EHI kept epoch 2, its k-means start epoch 3,
    # the DE epoch 3
    assert (kept["main/ehi"], kept["indexer_init~kmeans/ehi"], kept["main/de"]) == (2, 3, 3)
    assert epochs.groupby("run").selected.apply(lambda s: (s == "yes").sum()).eq(1).all()
    # and the loop's own rule (ehi.train.selection) picks the same epochs from the same rows
    for run in ("main/ehi", "indexer_init~kmeans/ehi", "main/de"):  # the runs with dev figures
        rows = epochs[epochs.run == run]
        key = "dev_tree_ndcg@10" if run.endswith("/ehi") else "dev_ndcg@10"
        assert best_epoch(rows.to_dict("records"), key) == kept[run], run


def test_the_runs_are_the_settings_the_configs_declare_named_as_the_workflow_names_them():
    """Every committed SciFact log is a training of a setting the two configs declare, named by that
    setting: the same run names the folder walk gave, read from no folder."""
    logs = training_logs(REPO / "results" / "scifact", config_settings(SCIFACT, SCHEMA))
    assert list(logs) == ["indexer_init~kmeans/ehi", "main/de", "main/ehi", "siamese_loss~decoupled_softmax/ehi",
                          "siamese_loss~soft_topk/ehi", "siamese_loss~softmax/ehi"]
    walked = sorted((REPO / "results" / "scifact").rglob("train_log/*.parquet"))
    assert sorted(logs.values()) == walked
    # the recipe alone declares no DEXML row: its logs are not read
    assert "siamese_loss~softmax/ehi" not in training_logs(
        REPO / "results" / "scifact", config_settings(read_config_file(REPO / "config" / "scifact.yaml"), SCHEMA))


def test_grid_points_and_seed_replicas_are_runs_of_their_own(tmp_path):
    config = {"train": {"seed": 0, "seeds": [0, 1], "lr_encoder": {"choose": [1e-4, 1e-3]}},
              "ablations": {"floor": [{"indexer_init": "kmeans"}]},
              "evaluation": {"variant_systems": {"ehi-warm+tree": "floor/ehi+tree"}}}
    settings = config_settings(config, SCHEMA)
    for variant in ("main", "seed~1", "indexer_init~kmeans/seed~1", "lr_encoder~0.001"):
        (tmp_path / variant / "train_log").mkdir(parents=True)
        pd.DataFrame({"epoch": [0]}).to_parquet(tmp_path / variant / "train_log" / "ehi.parquet")
    (tmp_path / "undeclared~1" / "train_log").mkdir(parents=True)  # a folder no setting of the config is
    pd.DataFrame({"epoch": [0]}).to_parquet(tmp_path / "undeclared~1" / "train_log" / "ehi.parquet")
    assert set(training_logs(tmp_path, settings)) == {"main/ehi", "seed~1/ehi", "indexer_init~kmeans/seed~1/ehi",
                                                      "lr_encoder~0.001/ehi"}


def test_selected_models_scores_ivf_and_the_tree_on_the_runs_own_embeddings(tmp_path, tiny_dataset):
    rng = np.random.default_rng(0)
    resources = tmp_path / "res"
    tiny_dataset.write(resources / "data")
    n_q, n_d = len(tiny_dataset.queries), len(tiny_dataset.corpus)
    docs = rng.standard_normal((n_d, 16)).astype(np.float32)
    queries = rng.standard_normal((n_q, 16)).astype(np.float32)
    for run in ("main/de", "main/ehi"):
        (resources / run / "emb").mkdir(parents=True)
        np.save(resources / run / "emb" / "corpus.npy", docs)
        np.save(resources / run / "emb" / "queries.npy", queries)
    torch.manual_seed(0)
    tree = kmeans_init_(TreeIndexer(16, 1, 4), docs, 0)
    EHIIndex.build(docs, tree).save(resources / "main" / "ehi" / "index")
    table = selected_models(tiny_dataset, resources, ["main/de", "main/ehi", "main/missing"], nlist=4)
    assert table.run.tolist() == ["main/de", "main/ehi", "main/ehi"]  # a run without embeddings is skipped
    assert table.system.tolist() == ["faiss-ivf (nlist=4)", "faiss-ivf (nlist=4)", "ehi tree (4 leaves)"]
    dev_q, dev_rel, _, _ = split_arrays(tiny_dataset, queries, "dev")
    exact = ranking_metrics(top_rows(dev_q @ docs.T), dev_rel)
    assert np.allclose(table["exact ndcg@10"], exact["ndcg@10"])
    assert (table[["frac@0.05", "frac@0.1"]].max(axis=1) <= 0.5).all()


def test_the_command_writes_all_three_stages(tmp_path, tiny_dataset):
    resources, results = tmp_path / "res", tmp_path / "results"
    tiny_dataset.write(resources / "data")
    log = pd.DataFrame({"epoch": [0, 1], "dev_ndcg@10": [0.2, 0.3], "seconds": [np.nan, 5.0]})
    (results / "main" / "train_log").mkdir(parents=True)
    log.to_parquet(results / "main" / "train_log" / "de.parquet")
    (tmp_path / "c.yaml").write_text("train: {seed: 0}\n")
    main([str(results), str(resources), "--configfile", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "out")])
    text = (tmp_path / "out.md").read_text()
    assert "## 1. tree alone" in text and "## 2. joint training" in text and "## 3. each run" in text
    csv = pd.read_csv(tmp_path / "out.csv")
    assert set(csv.stage.str[:2]) == {"2."} and csv.selected.eq("yes").sum() == 1
