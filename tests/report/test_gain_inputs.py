"""ehi.report.gain_inputs: the gain table declares the per-query tables it reads, the main
setting's and its variant systems', every seed; an ablation variant's are no input of it."""

from pathlib import Path

from ehi.report.gain_inputs import committed_per_query, gain_reads

FLOOR = "indexer_init~ivf/floor~kmeans"


def test_the_main_setting_and_the_variant_systems_of_every_seed_are_read():
    names = {(FLOOR, "ehi+tree"): "ehi-floor+tree"}
    assert gain_reads("main", "de+faiss-ivf", names) and gain_reads("seed~2", "ehi+tree", names)
    assert gain_reads(FLOOR, "ehi+tree", names) and gain_reads(f"{FLOOR}/seed~1", "ehi+tree", names)
    assert not gain_reads(FLOOR, "ehi+exact", names) and not gain_reads("height~1", "ehi+tree", names)


def test_committed_per_query_lists_only_what_the_gain_reads(tmp_path):
    files = ["main/per_query/ehi+tree.parquet", "seed~1/per_query/de+exact.parquet",
             f"{FLOOR}/per_query/ehi+tree.parquet", f"{FLOOR}/seed~1/per_query/ehi+tree.parquet",
             f"{FLOOR}/per_query/ehi+exact.parquet", "height~1/per_query/ehi+tree.parquet"]
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).touch()
    read = committed_per_query(tmp_path, {"ehi-floor+tree": f"{FLOOR}/ehi+tree"})
    assert [Path(p).relative_to(tmp_path).as_posix() for p in read] == sorted(files[:4])
