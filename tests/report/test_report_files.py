"""ehi.report.report_files: no dataset name takes another's committed tables, and no render drops a
committed figure (with the rows of the tables beside it) that its config cannot draw."""

from pathlib import Path

import pytest

from ehi.core.errors import ConfigError
from ehi.report.report_files import TABLE_KINDS, check_no_figure_dropped, check_table_names, result_datasets

REPO = Path(__file__).resolve().parents[2]


def test_a_name_whose_tables_are_a_committed_datasets_is_refused(tmp_path):
    (tmp_path / "synthetic").mkdir()
    (tmp_path / "tables").mkdir()
    with pytest.raises(ConfigError, match="dataset.name 'synthetic_ablation': its table "
                                          r"results/tables/synthetic_ablation_significance\.\* is dataset 'synthetic''s table ablation_significance"):
        check_table_names("synthetic_ablation", tmp_path)
    for name in ("synthetic", "synthetic_x", "mine"):
        check_table_names(name, tmp_path)


def test_no_committed_dataset_name_takes_anothers_tables():
    for name in result_datasets(REPO / "results"):
        check_table_names(name, REPO / "results")


def test_every_committed_table_of_a_dataset_is_of_a_known_kind():
    """TABLE_KINDS is what the collision check compares: a new kind of table must join it."""
    datasets = result_datasets(REPO / "results")
    for path in (REPO / "results" / "tables").iterdir():
        owners = [d for d in datasets if path.stem.startswith(f"{d}_")]
        if owners:
            assert path.stem[len(max(owners, key=len)) + 1:] in TABLE_KINDS, path.name


def test_a_render_that_would_drop_a_committed_figure_is_refused(tmp_path):
    committed, rendered = tmp_path / "committed", tmp_path / "rendered"
    for folder, names in ((committed, ["kmr_ndcg_at_10.png", "ablation_siamese_loss.png"]), (rendered, ["kmr_ndcg_at_10.png"])):
        folder.mkdir()
        for name in names:
            (folder / name).write_bytes(b"png")
    with pytest.raises(ConfigError, match="ablation_siamese_loss.png would be dropped: this config lacks the rows it shows"):
        check_no_figure_dropped(committed, rendered)
    (rendered / "ablation_siamese_loss.png").write_bytes(b"png")
    (rendered / "new.png").write_bytes(b"png")
    check_no_figure_dropped(committed, rendered)
    check_no_figure_dropped(tmp_path / "none yet", rendered)


def test_a_world_fit_table_of_other_datasets_is_not_replaced(tmp_path):
    from ehi.report.report_files import check_same_datasets

    table = tmp_path / "world_fit.csv"
    table.write_text("dataset,dim\nwebster,384\nworld_1e4,384\n")
    with pytest.raises(ConfigError, match=r"holds datasets \['webster', 'world_1e4'\], this config's are \['a', 'b'\]"):
        check_same_datasets(table, ["a", "b"])
    check_same_datasets(table, ["world_1e4", "webster"])
    check_same_datasets(tmp_path / "none.csv", ["a"])
