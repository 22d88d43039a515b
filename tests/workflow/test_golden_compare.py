"""The golden's tolerances (ehi/report/golden_tolerances.py) pass last-bit drift and catch real changes.

Fed the golden's own tables and weight fingerprints, perturbed the way another CPU perturbs them
(scores and weights in their last bits, near-tied documents swapped) and the way a change of method
does (a metric, a ranking, a loss or a weight moved for real).
"""

import json

import numpy as np
import pandas as pd
import pytest

from digests import GOLDEN, golden_table_path  # tests/workflow/digests.py
from ehi.report.golden_tolerances import SCORE_ATOL, compare_table, compare_weights, tensor_fingerprint

GOLDEN_DIGESTS = json.loads(GOLDEN.read_text())["digests"]


def golden_table(kind: str) -> tuple[str, pd.DataFrame]:
    name = next(n for n in sorted(GOLDEN_DIGESTS) if f"/{kind}/" in n and n.endswith(".parquet"))
    return name, pd.read_parquet(golden_table_path(name))


def test_every_golden_table_equals_itself():
    for name, entry in GOLDEN_DIGESTS.items():
        if "tensors" in entry:
            assert compare_weights(name, entry["tensors"], entry["tensors"]) == []
        else:
            df = pd.read_parquet(golden_table_path(name))
            assert compare_table(name, df, df.copy()) == []


def test_run_scores_pass_last_bit_drift_and_fail_a_real_move():
    name, run = golden_table("runs")
    drift = run.assign(score=run.score + np.float32(2.4e-7))
    assert compare_table(name, run, drift) == []
    moved = run.assign(score=run.score * np.float32(1.001))
    assert any("'score'" in p for p in compare_table(name, run, moved))


def _first_pair(run: pd.DataFrame, tied: bool) -> tuple[int, int]:
    """Two consecutive rows of one query's ranking (not the last), whose scores are near-tied or not."""
    same_query = (run.query_id.to_numpy()[1:] == run.query_id.to_numpy()[:-1]) & \
                 (run.budget_value.to_numpy()[1:] == run.budget_value.to_numpy()[:-1])
    gap = np.abs(np.diff(run.score.to_numpy(dtype=np.float64)))
    ok = same_query & ((gap <= SCORE_ATOL) if tied else (gap > 1e-3))
    ok[-1] = False
    i = int(np.flatnonzero(ok)[0])
    return i, i + 1


def test_run_doc_ids_may_swap_within_a_near_tie_only():
    name, run = golden_table("runs")
    i, j = _first_pair(run, tied=False)
    swapped = run.copy()
    swapped.loc[[i, j], "doc_id"] = run.loc[[j, i], "doc_id"].to_numpy()
    assert any("documents moved" in p for p in compare_table(name, run, swapped))
    tied = run.copy()
    tied.loc[j, "score"] = tied.loc[i, "score"]  # make the pair a near tie, then swap it
    swapped = tied.copy()
    swapped.loc[[i, j], "doc_id"] = tied.loc[[j, i], "doc_id"].to_numpy()
    assert compare_table(name, tied, swapped) == []


@pytest.mark.parametrize("kind", ["per_query", "summary"])
def test_metrics_are_held_exactly(kind):
    name = next(n for n in sorted(GOLDEN_DIGESTS) if n.endswith(f"{kind}.parquet") or f"/{kind}/" in n)
    df = pd.read_parquet(golden_table_path(name))
    moved = df.assign(value=df.value + 1e-9)
    assert any("'value'" in p for p in compare_table(name, df, moved))


def test_training_losses_pass_drift_and_fail_a_real_move():
    name, log = golden_table("train_log")
    assert compare_table(name, log, log.assign(loss=log.loss + 7e-9)) == []
    assert any("'loss'" in p for p in compare_table(name, log, log.assign(loss=log.loss * 1.001)))


def test_weights_pass_drift_and_fail_a_real_move():
    rng = np.random.default_rng(0)
    weights = {"w": rng.normal(0, 0.02, (64, 32)).astype(np.float32), "b": np.zeros(32, np.float32)}
    golden = {k: tensor_fingerprint(v) for k, v in weights.items()}
    drift = {k: tensor_fingerprint(v + rng.normal(0, 3e-7, v.shape).astype(np.float32)) for k, v in weights.items()}
    assert compare_weights("w.safetensors", golden, drift) == []
    trained = {k: tensor_fingerprint(v + rng.normal(0, 1e-4, v.shape).astype(np.float32)) for k, v in weights.items()}
    assert compare_weights("w.safetensors", golden, trained)
