"""The figures' style contract on the figures the test config's run drew (the session's one run,
tests/workflow/runs.py, which records each saved figure's style facts): every figure the run wrote
is checked; a system's line has the colour and marker of ehi.report.styles, the one module they
come from; every fraction-scored axis has percent ticks; every title names the dataset; a beyond
the paper system carries the dagger and the figure its note; panels that compare share x."""

from pathlib import Path

import pytest

from ehi.report.styles import BEYOND, BEYOND_NOTE, beyond_paper, colour, marker
from ehi.search.registry import kinds

DATASET = "test"  # config/test/test.yaml's dataset.name


@pytest.fixture(scope="module")
def drawn(test_config_run) -> list[dict]:
    return test_config_run.figures()


def _system(label: str) -> str | None:
    """The system a legend label names (``de+faiss-hnsw †``, ``ehi+tree (main setting)``), else None."""
    name = label.split(" (")[0].removesuffix(BEYOND)
    encoder, plus, search = name.partition("+")
    return name if plus and encoder and search.split("@")[0] in (*kinds(), "tree", "tree-pq") else None


def test_every_figure_of_the_run_was_checked(drawn, test_config_run):
    written = sorted(p.name for p in Path(test_config_run.workdir, "results", "figures", DATASET).glob("*.png"))
    assert written and sorted(f["name"] for f in drawn) == written


def test_every_system_line_has_its_colour_and_marker_from_the_styles_module(drawn):
    seen = set()
    for figure in drawn:
        for ax in figure["axes"]:
            for label, line_colour, line_marker in ax["lines"]:
                system = _system(label)
                if system is None:
                    continue
                seen.add(system)
                assert (line_colour, line_marker) == (colour(system), marker(system.partition("+")[2])), \
                    (figure["name"], label)
                assert label.split(" (")[0].endswith(BEYOND) == beyond_paper(system), (figure["name"], label)
                if beyond_paper(system):
                    assert BEYOND_NOTE in figure["texts"], figure["name"]
    assert {"ehi+tree", "de+exact", "de+faiss-ivf", "de+faiss-hnsw", "de+scann"} <= seen


def test_every_fraction_scored_axis_has_percent_ticks(drawn):
    kmr = [f for f in drawn if f["name"].startswith("kmr_")]
    assert kmr, [f["name"] for f in drawn]
    for figure in kmr:
        for ax in (a for a in figure["axes"] if a["lines"]):
            assert ax["xscale"] == "log" and ax["xticks"], (figure["name"], ax)
            assert all(t.endswith("%") for t in ax["xticks"]), (figure["name"], ax["xticks"])


def test_every_title_names_the_dataset(drawn):
    for figure in drawn:
        titles = [figure["suptitle"], *(ax["title"] for ax in figure["axes"])]
        assert any(f"{DATASET}:" in t for t in titles), (figure["name"], titles)


def test_compared_panels_share_their_x_axis(drawn):
    by_name = {f["name"]: f for f in drawn}
    for name in ("leaf_sizes.png", "training.png"):
        panels = by_name[name]["axes"]
        assert len(panels) > 1 and all(len(ax["shares_x"]) == len(panels) - 1 for ax in panels), (name, panels)
