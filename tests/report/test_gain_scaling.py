"""ehi.report.gain_scaling: one comparison a dataset, its family, and the table and figure over N."""

import numpy as np
import pandas as pd

from ehi.report.gain import GainSystems
from ehi.report.gain_scaling import scaling_figure, scaling_rows, scaling_table

# as a config's gain.trees and gain.controls name them
TREE, IVF, IVF_ELSE = "ehi-floor+tree", "pre+ivf-lists", "ehi+faiss-ivf"
SYSTEMS = GainSystems(trees=(TREE, "ehi+tree"), controls=(IVF, IVF_ELSE))


def _gains():
    rows = []
    for dataset, n_docs, work, asym, ivfs in [("w4", 10_000, "counted", 0.0, (IVF, IVF_ELSE)),
                                              ("w5", 100_000, "counted", 1.0, (IVF, IVF_ELSE)),
                                              ("real", 5_000, "derived", np.nan, (IVF_ELSE,)),
                                              ("big", 100_000, "counted", np.nan, (IVF, IVF_ELSE))]:
        for ivf in ivfs:
            for budget in (0.05, 0.5):
                gain = np.nan if (work == "derived" and budget < 0.5) else (0.1 if ivf == IVF else 0.05)
                rows.append({"dataset": dataset, "n_docs": n_docs, "leaves": 100, "train_queries_per_leaf": 10.0,
                             "asymmetry": asym, "work": work, "metric": "ndcg@10", "tree": TREE, "ivf": ivf,
                             "budget": budget, "gain": gain, "gain_sd": 0.01, "n_seeds": 3, "p_holm": 0.01})
    return pd.DataFrame(rows)


def test_each_dataset_keeps_ivf_with_as_many_lists_else_the_tuned_ivf():
    rows = scaling_rows(_gains(), SYSTEMS)
    assert set(zip(rows.dataset, rows.ivf)) == {("w4", IVF), ("w5", IVF), ("real", IVF_ELSE), ("big", IVF)}
    # a collection with work counted (no world knobs in its facts) is no synthetic world
    assert dict(zip(rows.dataset, rows.group)) == {"w4": "world", "w5": "world_asym", "real": "collection",
                                                   "big": "collection_counted"}


def test_the_table_marks_budgets_a_dataset_cannot_reach(tmp_path):
    table = scaling_table(scaling_rows(_gains(), SYSTEMS)).set_index("dataset")
    assert table.loc["real", "5%"] == "–"
    assert table.loc["w4", "5%"] == "+0.100 ± 0.010*"
    assert scaling_figure(scaling_rows(_gains(), SYSTEMS), tmp_path / "by_n.png", TREE).stat().st_size > 0
