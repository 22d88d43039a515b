"""The setting chosen on dev across datasets of a grid, from training logs alone."""

import pandas as pd

from ehi.report.dev_choice import dev_choice, dev_choice_markdown


def log(values, key="dev_ndcg@10"):
    return pd.DataFrame({"epoch": range(len(values)), key: values})


def test_each_model_gets_the_dataset_best_on_its_own_dev_key():
    table = dev_choice({
        ("lr_a", "main", "de"): log([0.5, 0.6, 0.55]),
        ("lr_b", "main", "de"): log([0.5, 0.58, 0.59]),
        ("lr_a", "main", "ehi"): log([0.2, 0.3], "dev_tree_auc"),
        ("lr_b", "main", "ehi"): log([0.2, 0.35], "dev_tree_auc"),
    })
    chosen = table[table.chosen].set_index("model").dataset.to_dict()
    assert chosen == {"de": "lr_a", "ehi": "lr_b"}
    de_a = table[(table.model == "de") & (table.dataset == "lr_a")].iloc[0]
    assert de_a.kept_epoch == 1 and de_a.dev_value == 0.6 and de_a.selection_key == "dev_ndcg@10"
    assert "chosen" in dev_choice_markdown(table)


def test_a_tie_chooses_one_dataset():
    table = dev_choice({("a", "main", "de"): log([0.5]), ("b", "main", "de"): log([0.5])})
    assert table.chosen.sum() == 1


def test_the_trainings_read_include_every_ablation_row_of_ehi():
    """An ablation row is a training dev can choose among, whether or not a variant system names it."""
    from ehi.report.dev_choice import training_logs

    cfg = {"search": {"systems": ["de+exact", "ehi+tree"]},
           "train": {"lr_encoder": 1e-4, "floor": "none"},
           "ablations": {"floor": [{"floor": "kmeans", "lr_encoder": 1e-3}]},
           "evaluation": {"variant_systems": {"named": "height~1/ehi+tree"}}}
    logs = training_logs("grid_a", cfg, ["lr_encoder", "height", "floor"])
    assert sorted(logs) == [("grid_a", "height~1", "ehi"), ("grid_a", "lr_encoder~0.001/floor~kmeans", "ehi"),
                            ("grid_a", "main", "de"), ("grid_a", "main", "ehi")]
    assert logs[("grid_a", "lr_encoder~0.001/floor~kmeans", "ehi")] == \
        "results/grid_a/lr_encoder~0.001/floor~kmeans/train_log/ehi.parquet"
