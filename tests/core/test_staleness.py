import json

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ehi.core.io import PROVENANCE_KEY, read_provenance, write_table
from ehi.core.staleness import describe, stale_reason, stale_results
from ehi.core.versions import KIND_STAGE, STAGES, VERSIONS, upstream_versions


def _per_query(path):
    df = pd.DataFrame({"dataset": ["d"], "system": ["de+exact"], "variant": ["main"], "budget_param": ["none"],
                       "budget_value": [0.0], "frac_visited": [1.0], "query_id": ["q1"], "metric": ["ndcg@10"],
                       "value": [0.5]})
    return write_table(df, "per_query", path)


def _bumped(stage):
    return {**VERSIONS, stage: VERSIONS[stage] + 1}


def test_every_result_is_stamped_with_the_version_of_every_stage(tmp_path):
    assert read_provenance(_per_query(tmp_path / "pq.parquet"))["versions"] == VERSIONS


def test_a_fresh_result_is_current(tmp_path):
    assert stale_reason(_per_query(tmp_path / "pq.parquet")) is None
    assert stale_results(tmp_path) == []


def test_a_bump_of_the_stage_or_an_earlier_one_makes_it_stale(tmp_path):
    path = _per_query(tmp_path / "pq.parquet")
    for stage in upstream_versions("evaluate"):
        found = stale_reason(path, _bumped(stage))
        assert found == ("evaluate", f"made by other versions: {stage} {VERSIONS[stage]} -> {VERSIONS[stage] + 1}")


def test_a_bump_of_a_later_stage_leaves_it_current(tmp_path):
    path = _per_query(tmp_path / "pq.parquet")
    assert stale_reason(path, _bumped("report")) is None


def test_an_unstamped_result_is_stale_not_passed(tmp_path):
    path = tmp_path / "old.parquet"
    old_provenance = {"ehi_version": "0.1.0", "git_commit": "19d607473280e03", "kind": "per_query"}
    pq.write_table(pa.table({"value": [0.5]}).replace_schema_metadata({PROVENANCE_KEY: json.dumps(old_provenance)}), path)
    stage, reason = stale_reason(path)
    assert stage == "evaluate" and "no stage versions stamped" in reason and "19d6074" in reason
    [stale] = stale_results(tmp_path)
    assert stale.path == path and "1 cached result(s) stale" in describe([stale])


def test_files_of_kinds_no_stage_owns_are_not_judged(tmp_path):
    pq.write_table(pa.table({"x": [1]}), tmp_path / "bench.parquet")  # no provenance at all
    assert stale_results(tmp_path) == []


def test_the_stage_chain_matches_the_kinds():
    assert set(KIND_STAGE.values()) <= set(STAGES)
    assert list(upstream_versions("search")) == ["data", "train", "embed", "index", "search"]
    with pytest.raises(KeyError, match="stages"):
        upstream_versions("deploy")
