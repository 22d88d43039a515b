"""The step log's figure: its three panels, which gradient lines it draws, where it marks the
collapse (ehi.report.step_figure)."""

import pandas as pd
import pytest

from ehi.report import step_figure


@pytest.fixture
def drawn(monkeypatch):
    made = []
    monkeypatch.setattr(step_figure, "save_figure", lambda fig, path: made.append(fig) or path)
    return made


def _log() -> pd.DataFrame:
    """Six logged steps over two epochs; the leaves empty past 5% at step 30."""
    steps = [0, 10, 20, 30, 40, 50]
    return pd.DataFrame({
        "epoch": [1, 1, 1, 2, 2, 2], "step": steps,
        "leaf_empty_fraction": [0.0, 0.01, 0.05, 0.10, 0.15, 0.15],
        "leaf_max_over_mean": [1.5, 2, 4, 9, 20, 40], "leaf_entropy": [0.99, 0.98, 0.9, 0.8, 0.7, 0.6],
        "loss": [0.3] * 6, "siamese": [0.1] * 6, "indexing": [0.2] * 6, "tree_updates": [0.05] * 6,
        "grad_siamese_tower": [0.2] * 6, "grad_siamese_router": [0.0] * 6,
        "grad_indexing_tower": [2.0] * 6, "grad_indexing_router": [0.3] * 6,
        "grad_loss_tower": [2.1] * 6, "grad_loss_router": [0.3] * 6,
    })


def test_collapse_onset_is_the_first_step_past_five_percent_empty():
    assert step_figure.collapse_onset(_log()) == 30
    assert step_figure.collapse_onset(_log().assign(leaf_empty_fraction=0.05)) is None


def test_three_panels_over_steps_and_no_line_for_a_gradient_that_cannot_reach(drawn):
    step_figure.plot_step_log(_log(), "steps.png", title="toy: EHI's training, step by step")
    fig, = drawn
    occupancy, losses, grads = fig.axes[:3]
    assert [ax.get_title()[:3] for ax in (occupancy, losses, grads)] == ["(a)", "(b)", "(c)"]
    assert grads.get_yscale() == "log"
    drawn_grads = {line.get_label() for line in grads.get_lines() if not line.get_label().startswith("_")}
    assert drawn_grads == {"siamese -> tower", "indexing -> tower", "indexing -> router", "loss -> tower",
                           "loss -> router"}  # siamese sends the router nothing: no line at 0
    assert {line.get_label() for line in losses.get_lines()} >= {"loss", "siamese", "indexing", "tree_updates"}
    verticals = {line.get_xdata()[0] for line in grads.get_lines() if line.get_label().startswith("_")}
    assert verticals == {30}  # epoch 2 starts, and the leaves empty past 5%, at step 30
    assert fig._suptitle.get_text().startswith("toy")
