"""The training-log table: the dev record per epoch, leaf balance, and which epoch and tree were kept."""

import pandas as pd

from ehi.report.train_log import train_log_table


def test_kept_epoch_and_tree_follow_the_column_selected_on():
    ehi = pd.DataFrame({"epoch": [0, 1, 2], "dev_ndcg@10": [0.5, 0.6, 0.7], "dev_tree_ndcg@10": [0.3, 0.5, 0.4],
                        "dev_tree_auc": [0.2, 0.3, 0.3], "dev_floor_auc": [0.25, 0.3, 0.35],
                        "dev_floor_kmeans": [1.0, 0.0, 1.0], "leaf_max_over_mean": [float("nan"), 2.0, 3.0],
                        "seconds": [0.0, 1.0, 1.0]})
    de = pd.DataFrame({"epoch": [0, 1], "dev_ndcg@10": [0.5, 0.4]})
    table = train_log_table({"ehi": ehi, "de": de}).set_index(["model", "epoch"])
    # selected on the floor's area: epoch 2, whose better tree on dev was the k-means one
    assert table.loc[("ehi", 2), "kept"] == "kmeans tree" and table.loc[("ehi", 1), "kept"] == ""
    assert table.loc[("de", 0), "kept"] == "yes"
    assert "leaf_max_over_mean" in table and "seconds" not in table
