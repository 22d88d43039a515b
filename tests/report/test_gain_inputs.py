"""ehi.report.gain_inputs: the gain table declares the per-query tables it reads, the main
setting's and its variant systems', every seed; an ablation variant's are no input of it."""

from pathlib import Path

from ehi.evaluate.seeds import setting_replicas
from ehi.evaluate.variant_systems import parse
from ehi.report.gain_inputs import committed_per_query

FLOOR = "indexer_init~ivf/floor~kmeans"


def test_committed_per_query_lists_only_what_the_gain_reads(tmp_path):
    files = ["main/per_query/ehi+tree.parquet", "seed~1/per_query/de+exact.parquet",
             f"{FLOOR}/per_query/ehi+tree.parquet", f"{FLOOR}/seed~1/per_query/ehi+tree.parquet",
             f"{FLOOR}/per_query/ehi+exact.parquet", "height~1/per_query/ehi+tree.parquet",
             "seed~2/per_query/ehi+tree.parquet"]  # a seed the config no longer trains
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).touch()
    systems = {"ehi-floor+tree": f"{FLOOR}/ehi+tree"}
    read = committed_per_query(tmp_path, systems, setting_replicas(parse(systems), [0, 1], 0))
    assert [Path(p).relative_to(tmp_path).as_posix() for p in read] == sorted(files[:4])
    # one seed: no replica's folder is read
    assert [Path(p).relative_to(tmp_path).as_posix() for p in committed_per_query(tmp_path, systems, {})] == \
        sorted([files[0], files[2]])
