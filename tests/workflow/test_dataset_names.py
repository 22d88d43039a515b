"""A dataset name is one path component: '.' or '..' (outputs at the repository root) and names too
long for a file system are refused by the dry run, with nothing written."""

import pytest

from tests.workflow.test_bad_input import refused_dry_run


@pytest.mark.parametrize("override", [{"dataset": {"name": ".."}}, {"dataset": {"name": "."}},
                                      {"dataset": {"name": "n" * 300}}, {"datasets": {"..": {}}}],
                         ids=["dataset.name ..", "dataset.name .", "a 300-character name", "a datasets entry .."])
def test_a_name_that_is_no_path_component_is_refused_at_the_dry_run(tmp_path, override):
    said = refused_dry_run(tmp_path, override)
    refusal = [line for line in said.splitlines() if "error:" in line]
    assert len(refusal) == 1 and ("config dataset.name: value" in refusal[0] or "config datasets: name" in refusal[0])
    assert "is not allowed" in refusal[0] and len(said.strip().splitlines()) <= 2  # no schema dump
