"""A report-only run names what it lacks by the target that would write it; a finished run names what to open."""

from ehi.report.missing import describe_missing, target_of, what_to_open

ABLATIONS = {"tree_shape": ["height~1/branching~8"], "loss_terms": ["lambda_indexing~0.0"]}


def test_each_missing_file_is_named_with_its_target():
    res = "results/test"
    assert target_of(f"{res}/height~1/branching~8/summary.parquet", res, ABLATIONS) == "ablation_tree_shape"
    assert target_of(f"{res}/main/leaves.parquet", res, ABLATIONS) == "main"
    text = describe_missing([f"{res}/lambda_indexing~0.0/summary.parquet", f"{res}/main/leaves.parquet"], res,
                            ABLATIONS, " --configfile config/test/test.yaml")
    lines = text.splitlines()
    assert "2 file(s)" in lines[0] and len(lines) == 3
    assert "ablation_loss_terms --configfile config/test/test.yaml would write lambda_indexing~0.0/summary.parquet" in text
    assert "snakemake --cores N main --configfile config/test/test.yaml would write main/leaves.parquet" in text


def test_a_run_closes_naming_the_verdicts_table_and_figure_that_exist(tmp_path):
    tables, figures = tmp_path / "results" / "tables", tmp_path / "results" / "figures" / "a"
    figures.mkdir(parents=True)
    tables.mkdir()
    for name in ("a_kmr.md", "a_claims.md", "b_claims.md"):
        (tables / name).write_text("x")
    (figures / "kmr_recall_at_100.png").write_bytes(b"")
    assert what_to_open(["a", "b"], tmp_path) == [  # b has no KMR table: nothing to open yet
        "a: open results/tables/a_claims.md, results/tables/a_kmr.md, results/figures/a/kmr_recall_at_100.png"]
    (figures / "kmr_ndcg_at_10.png").write_bytes(b"")
    assert what_to_open(["a"], tmp_path)[0].endswith("results/figures/a/kmr_ndcg_at_10.png")
