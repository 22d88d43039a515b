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


def test_the_trainings_read_are_main_s_models_and_each_ablation_row_s():
    """An ablation row is a training dev can choose among, whether or not a variant system names it;
    a main setting that searches DE alone trains no EHI there."""
    from ehi.report.dev_choice import training_logs

    cfg = {"search": {"systems": ["pre+exact", "de+exact", "ehi+tree"]},
           "train": {"lr_encoder": 1e-4, "floor": "none", "height": 2},
           "ablations": {"floor": [{"floor": "kmeans", "lr_encoder": 1e-3}], "shape": [{"height": 1}]}}
    logs = training_logs("grid_a", cfg, ["lr_encoder", "height", "floor"])
    assert list(logs) == [("grid_a", "main", "de"), ("grid_a", "main", "ehi"), ("grid_a", "height~1", "ehi"),
                          ("grid_a", "lr_encoder~0.001/floor~kmeans", "ehi")]
    assert logs[("grid_a", "lr_encoder~0.001/floor~kmeans", "ehi")] == \
        "results/grid_a/lr_encoder~0.001/floor~kmeans/train_log/ehi.parquet"
    de_only = {**cfg, "search": {"systems": ["de+faiss-ivf"]}, "ablation_systems": ["ehi+tree", "ehi+exact"]}
    assert ("grid_a", "main", "ehi") not in training_logs("grid_a", de_only, ["lr_encoder", "height", "floor"])


def test_no_training_or_a_training_without_dev_figures_is_refused_not_a_table_of_nothing_chosen():
    import numpy as np
    import pytest

    from ehi.core.errors import ConfigError, DataError

    with pytest.raises(ConfigError, match="dev_choice: no training to choose among"):
        dev_choice({})
    no_dev = pd.DataFrame({"epoch": [0, 1], "loss": [1.0, 0.5]})
    with pytest.raises(DataError, match=r"the training log of b main de holds no dev value \(dev_ndcg@10\)"):
        dev_choice({("a", "main", "de"): log([0.5]), ("b", "main", "de"): no_dev})
    with pytest.raises(DataError, match="holds no dev value"):
        dev_choice({("a", "main", "de"): log([np.nan, np.nan])})
