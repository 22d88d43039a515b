"""A report-only run names what it lacks by the target that would write it."""

from ehi.report.missing import describe_missing, target_of

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
