"""One look per system in every figure; identical curves named; the kept epoch found; ablation intervals."""

import numpy as np
import pandas as pd

from ehi.report.figures import kept_epoch, plot_ablation
from ehi.report.kmr_figures import _same_curves
from ehi.report.styles import COLOURS, colour, is_ehi_search, style


def test_each_known_system_has_its_own_colour_and_ehi_search_stands_out():
    assert len(set(COLOURS.values())) == len(COLOURS)
    assert colour("plugin+thing") == colour("plugin+thing")  # unknown systems keep one colour too
    assert is_ehi_search("ehi+tree") and is_ehi_search("ehi-warm+tree-pq") and not is_ehi_search("ehi+faiss-ivf")
    assert style("ehi+tree")["linewidth"] > style("de+scann")["linewidth"]
    assert style("de+scann")["marker"] != style("de+faiss-ivf")["marker"]


def test_identical_curves_are_named():
    points = {"frac_visited": [0.1, 0.2], "value": [0.5, 0.6], "metric": "ndcg@10"}
    rows = pd.concat([pd.DataFrame({**points, "system": s}) for s in ("de+scann", "de+scann-ah")] +
                     [pd.DataFrame({**points, "value": [0.5, 0.7], "system": "de+faiss-ivf"})])
    assert _same_curves(rows) == {"de+scann-ah": "de+scann"}
    import matplotlib.pyplot as plt

    from ehi.report.kmr_figures import draw_kmr

    fig, ax = plt.subplots()
    draw_kmr(ax, rows.assign(budget_param="nprobe", budget_value=1.0), "ndcg@10")
    labels = ax.get_legend_handles_labels()[1]
    plt.close(fig)
    # the points are the same, not the rankings behind them: the legend claims no more
    assert any(label.endswith("(same curve as de+scann)") for label in labels) and not any("(=" in x for x in labels)


def test_kept_epoch_is_the_best_dev_epoch():
    log = pd.DataFrame({"epoch": [0, 1, 2, 3], "dev_ndcg@10": [0.1, 0.3, 0.5, 0.4],
                        "dev_tree_ndcg@10": [0.1, 0.4, 0.3, 0.2]})
    assert kept_epoch(log) == 1  # EHI: the tree's dev score
    assert kept_epoch(log.drop(columns="dev_tree_ndcg@10")) == 2 and kept_epoch(log[["epoch"]]) is None


def test_ablation_figure_draws_intervals(tmp_path):
    table = pd.DataFrame({"ablation": "loss", "variant": ["main", "loss~a"], "tree ndcg@10 @10%": [0.60, 0.61],
                          "exact ndcg@10": [0.65, np.nan]})
    sig = pd.DataFrame({"variant": ["loss~a"], "system_a": ["ehi+tree"], "metric": ["ndcg@10"],
                        "test": ["randomization"], "mean_b": [0.60], "ci_low": [-0.01], "ci_high": [0.03]})
    path = plot_ablation(table, ["tree ndcg@10 @10%", "exact ndcg@10"], tmp_path / "a.png", "toy", sig=sig)
    assert path.stat().st_size > 0
