"""The figures' style contract: every KMR family draws a system in the same colour and marker (the
marker from its ANNS registry entry), percent ticks on every fraction-scored axis, a dagger and
its note on the systems beyond the paper, shared axes where panels compare, the dataset in titles."""

import numpy as np
import pandas as pd
import pytest

from ehi.report import figures, kmr_figures
from ehi.report.seed_tables import plot_kmr_over_seeds
from ehi.report.styles import BEYOND, BEYOND_NOTE, colour, marker, percent_axis
from ehi.search.registry import ann_kind, kinds

SYSTEMS = ["ehi+tree", "de+faiss-ivf", "de+faiss-hnsw", "ehi-warm+tree", "de+exact"]


@pytest.fixture
def drawn(monkeypatch):
    """The figures the functions below make, kept open instead of written."""
    made = []
    for module in (figures, kmr_figures):
        monkeypatch.setattr(module, "save_figure", lambda fig, path: made.append(fig) or path)
    return made


def _summary(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [{"system": s, "metric": "ndcg@10", "frac_visited": f, "value": rng.random()}
            for s in SYSTEMS for f in ((1.0,) if s.endswith("exact") else (0.01, 0.05, 0.2, 1.0))]
    return pd.DataFrame(rows)


def _seeds_long() -> pd.DataFrame:
    summary = _summary()
    return summary.assign(min=summary.value - 0.01, max=summary.value + 0.01, n_seeds=3)


def _lines(fig) -> dict[str, tuple[str, str]]:
    """{legend label: (colour, marker)} of every line of every axis (error bars' lines included)."""
    out = {}
    for ax in fig.axes:
        for line in ax.get_lines():
            if not line.get_label().startswith("_"):
                out[line.get_label()] = (line.get_color(), line.get_marker())
        for container in ax.containers:
            line = container.lines[0]
            out[container.get_label()] = (line.get_color(), line.get_marker())
    return out


def test_every_kmr_family_keeps_one_look_per_system_and_percent_ticks(drawn):
    kmr_figures.plot_kmr(_summary(), "ndcg@10", "kmr.png", title="toy: ndcg@10")
    kmr_figures.plot_kmr_panels({"toy": _summary(), "other": _summary(1)}, "ndcg@10", "across.png")
    plot_kmr_over_seeds(_seeds_long(), "ndcg@10", "seeds.png", title="toy: ndcg@10 over training seeds")
    assert len(drawn) == 3
    for fig in drawn:
        fig.canvas.draw()
        looks = _lines(fig)
        for system in SYSTEMS:
            label = next(k for k in looks if k.split(" (")[0].removesuffix(BEYOND) == system)
            assert looks[label] == (colour(system), marker(system.partition("+")[2])), (system, label)
            assert label.split(" (")[0].endswith(BEYOND) == (system in ("de+faiss-hnsw", "ehi-warm+tree"))
        assert BEYOND_NOTE in [t.get_text() for t in fig.texts]
        for ax in (a for a in fig.axes if a.get_lines()):
            assert ax.get_xscale() == "log"
            ticks = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
            assert ticks and all(t.endswith("%") for t in ticks), ticks
    panels = [a for a in drawn[1].axes if a.get_lines()]
    assert panels[0].get_shared_x_axes().joined(panels[0], panels[1])
    assert "toy" in drawn[1]._suptitle.get_text() and "other" in drawn[1]._suptitle.get_text()


def test_the_markers_of_registry_kinds_come_from_their_entries():
    assert {marker(k) for k in kinds()} == {ann_kind(k).marker for k in kinds()}
    assert all(ann_kind(k).marker != "." for k in kinds())  # every built-in kind has its own marker


def test_leaf_panels_share_their_axes_and_titles_name_the_dataset(drawn):
    figures.plot_leaf_sizes({"main": np.array([3, 5, 0, 8]), "height~1": np.array([4, 4, 4, 4])}, "leaf.png",
                            title="toy: documents per leaf")
    log = pd.DataFrame({"epoch": [1, 2], "loss": [0.5, 0.4], "dev_ndcg@10": [0.3, 0.3]})
    figures.plot_training({"ehi": log, "de": log}, "training.png", title="toy: training")
    leaf, training = drawn
    a, b = [ax for ax in leaf.axes if ax.axison]
    assert a.get_shared_x_axes().joined(a, b) and a.get_shared_y_axes().joined(a, b)
    assert leaf._suptitle.get_text().startswith("toy") and training._suptitle.get_text().startswith("toy")
    panels = [ax for ax in training.axes if ax.axison]
    assert all(panels[0].get_shared_x_axes().joined(panels[0], ax) for ax in panels)  # the epochs align


def test_percent_axis_labels_values_already_in_percent():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0.5, 3, 40], [1, 2, 3])
    percent_axis(ax)
    fig.canvas.draw()
    low, high = ax.get_xlim()
    shown = [t.get_text() for t in ax.get_xticklabels() if t.get_text() and low <= t.get_position()[0] <= high]
    assert shown == ["1%", "2%", "5%", "10%", "20%"]
    plt.close(fig)


def test_every_registry_kind_has_its_own_colour_on_both_encoders():
    from ehi.report.styles import COLOURS

    assert {f"{e}+{k}" for e in ("ehi", "de") for k in kinds()} <= set(COLOURS)


def test_variants_get_the_configs_ablation_names_and_their_paths_a_footnote(drawn):
    from ehi.core.config_schema import variant_path
    from ehi.report.styles import variant_names

    rows = {"tree_shape": [{"height": "1", "branching": "8"}, {"height": "3", "branching": "8"}],
            "loss_terms": [{"lambda_indexing": "0.0"}],
            "floor": [{"indexer_init": "ivf", "lambda_balance": "10.0", "floor": "kmeans", "dev_eval": "True"}]}
    ablations = {name: list(map(variant_path, settings)) for name, settings in rows.items()}
    names = variant_names(rows)
    assert names == {"main": "main setting", "height~1/branching~8": "tree shape: height 1",
                     "height~3/branching~8": "tree shape: height 3", "lambda_indexing~0.0": "loss terms: lambda_indexing 0.0",
                     "indexer_init~ivf/lambda_balance~10.0/floor~kmeans/dev_eval~True": "floor"}
    sizes = {v: np.array([2, 3, 4]) for v in ("main", *ablations["floor"])}
    figures.plot_leaf_sizes(sizes, "leaf.png", title="toy: documents per leaf", names=names)
    fig = drawn[0]
    assert [ax.get_title().split("\n")[0] for ax in fig.axes if ax.axison] == ["main setting", "floor"]
    footnotes = [t.get_text() for t in fig.texts if t is not fig._suptitle]
    assert footnotes == [f"floor = {ablations['floor'][0]}"]  # the path: a footnote only


def test_a_frozen_encoders_flat_exact_search_panel_says_so(drawn):
    frozen = pd.DataFrame({"epoch": [1, 2, 3], "loss": [0.5, 0.4, 0.3], "dev_ndcg@10": [0.3, 0.3, 0.3],
                           "dev_tree_ndcg@10": [0.1, 0.2, 0.25]})
    figures.plot_training({"ehi": frozen}, "frozen.png", title="toy: training")
    figures.plot_training({"ehi": frozen.assign(**{"dev_ndcg@10": [0.3, 0.31, 0.32]})}, "trained.png")
    titles = [{ax.get_title() for ax in fig.axes} for fig in drawn]
    assert "dev nDCG@10, exact search" + figures.FROZEN_NOTE in titles[0]
    assert "dev nDCG@10, exact search" in titles[1]  # it moved: nothing to say
    assert not any(t.endswith(figures.FROZEN_NOTE) for t in titles[0] - {"dev nDCG@10, exact search" + figures.FROZEN_NOTE})


def _panels(fig) -> list:
    return [ax for ax in fig.axes if ax.axison]


def test_the_gain_growth_and_benchmark_figures_keep_the_contract(monkeypatch, tmp_path):
    """The scale study's gain figure, the trained benchmark's growth figure and the search benchmark's
    speed/recall figure: a title on every panel, each system in its registry colour, at most eight
    series a panel, percent ticks on a fraction axis."""
    import matplotlib.pyplot as plt

    from benchmarks import report, trained_growth
    from ehi.report import gain

    systems = gain.GainSystems(trees=("ehi-floor+tree", "ehi+tree"), controls=("pre+ivf-lists", "ehi+faiss-ivf"))
    kept = []
    monkeypatch.setattr(gain, "save_figure", lambda fig, path: kept.append(fig) or path)
    monkeypatch.setattr(plt, "close", lambda fig=None: None)  # the benchmark figures stay open to be read
    rows = [{"dataset": ds, "metric": m, "tree": t, "ivf": i, "budget": b, "gain": 0.01, "gain_sd": 0.002, "p_holm": 0.01}
            for ds in ("w1", "w2", "w3", "w4", "w5") for m in gain.METRICS for t in systems.trees for i in systems.controls
            for b in (0.01, 0.05, 0.2)]
    gain.gain_figure(pd.DataFrame(rows), tmp_path / "gain.png", systems)
    growth = pd.DataFrame([{"n_docs": n, "system": s, "qps": 1e3, "build_s": 1.0, "index_mb": 10.0, "train_s": 5.0}
                           for n in (10_000, 1_000_000) for s in ("ehi+tree", "ehi+tree-pq", "ehi-floor+tree",
                                                                  *(f"ehi+{k}" for k in kinds() if k != "tree"))])
    trained_growth.growth_figure(growth, tmp_path / "growth.png")
    curves = pd.DataFrame([{"dataset": "toy", "system": s, "recall": r, "qps": 100 / r, "threads": 1}
                           for s in ("ehi-scan", "faiss-ivf", "faiss-hnsw", "scann") for r in (0.5, 0.9)])
    report._figures(tmp_path, curves, None)
    gain_fig, growth_fig, speed_fig = kept[0], *[plt.figure(n) for n in plt.get_fignums()[-2:]]
    for fig in (gain_fig, growth_fig, speed_fig):
        fig.canvas.draw()
        for ax in _panels(fig):
            assert ax.get_title(), fig
            labelled = [line for line in ax.get_lines() if not line.get_label().startswith("_")]
            labelled += [c for c in ax.containers if not c.get_label().startswith("_")]
            assert 0 < len(labelled) <= 8, (ax.get_title(), len(labelled))
    for ax in _panels(gain_fig):
        assert all(t.get_text().endswith("%") for t in ax.get_xticklabels() if t.get_text())
        for container in ax.containers:
            tree = container.get_label().split(" − ")[0].removesuffix(BEYOND)
            assert container.lines[0].get_color() == colour(tree)
    for ax in _panels(growth_fig):
        for line in ax.get_lines():
            assert line.get_color() == colour(line.get_label().removesuffix(BEYOND))
    ax = _panels(speed_fig)[0]
    assert {line.get_label(): line.get_color() for line in ax.get_lines()} == {
        "ehi-scan": colour("ehi+tree"), "faiss-ivf": colour("ehi+faiss-ivf"), "faiss-hnsw": colour("ehi+faiss-hnsw"),
        "scann": colour("ehi+scann")}
    assert all(t.get_text().endswith("%") for t in ax.get_xticklabels() if t.get_text())


def test_the_kmr_footnote_sits_under_the_x_label_and_seeds_shade_a_band():
    """The dagger's note is drawn below the longest x label (the work axis), clear of it; a system
    run over several seeds is shaded by its min-max over them, said once in the legend, and a
    system the seed does not change gets no band."""
    from matplotlib.collections import PolyCollection
    from matplotlib.colors import to_rgb

    from ehi.core.work import BUDGET_AXES

    main = _summary()
    seeded = pd.concat([main.assign(seed=s, value=main.value + 0.02 * s, budget_value=main.frac_visited)
                        for s in range(3)], ignore_index=True)
    seeded = seeded[~seeded.system.str.endswith("exact") | (seeded.seed == 0)]  # exact search: run once
    fig = kmr_figures.kmr_figure(main, "ndcg@10", "toy", axis=BUDGET_AXES["work"], seeded=seeded)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    note = next(t for t in fig.texts if t.get_text() == BEYOND_NOTE).get_window_extent(renderer)
    xlabel = ax.xaxis.label.get_window_extent(renderer)
    assert not note.overlaps(xlabel) and note.y1 <= xlabel.y0, (note, xlabel)
    bands = [c for c in ax.collections if isinstance(c, PolyCollection) and len(c.get_paths())
             and len(c.get_paths()[0].vertices)]
    seeded_systems = [s for s in SYSTEMS if not s.endswith("exact")]
    assert len(bands) == len(seeded_systems)
    tree = next(b for b in bands if tuple(b.get_facecolor()[0][:3]) == to_rgb(colour("ehi+tree")))
    low = main[main.system == "ehi+tree"].value
    ys = tree.get_paths()[0].vertices[:, 1]
    assert ys.min() == pytest.approx(low.min()) and ys.max() == pytest.approx(low.max() + 0.04)
    assert "shaded: min-max over 3 training seeds" in ax.get_legend_handles_labels()[1]
    kmr_figures.plt.close(fig)
