"""train.seeds end to end on the test config: every model of the main setting and of the variant
reported beside it trained once per seed, searched and evaluated per seed; the KMR table shows mean
± sd over seeds, the significance pairs seed-averaged per-query values and carries the seed spread."""

import pandas as pd
import pytest
import yaml

from test_workflow import TEST_CONFIG, snakemake  # tests/workflow/test_workflow.py

SEEDED = {
    "train": {"seeds": [0, 1]},
    "search": {"systems": ["pre+exact", "de+exact", "de+faiss-ivf", "ehi+tree", "ehi+exact"]},
    "ablation_systems": ["ehi+tree"],
    "ablations": {"tree_start": [{"indexer_init": "kmeans"}]},
    "evaluation": {"variant_systems": {"ehi-warm+tree": "tree_start/ehi+tree"}},
}


@pytest.fixture(scope="module")
def seeded_run(tmp_path_factory):
    work = tmp_path_factory.mktemp("seeds")
    config = yaml.safe_load(open(TEST_CONFIG))
    for key, value in SEEDED.items():  # whole sections: the test config's own ablations go
        config[key] = {**config.get(key, {}), **value} if key in ("train", "search", "evaluation") else value
    path = work / "seeds.yaml"
    path.write_text(yaml.safe_dump(config))
    snakemake("all", "--cores", "2", "--configfile", str(path), workdir=work)
    return work


def test_each_seed_is_trained_searched_and_evaluated_as_a_replica(seeded_run):
    res = seeded_run / "results" / "test"
    for variant in ("main", "seed~1", "indexer_init~kmeans", "indexer_init~kmeans/seed~1"):
        assert (res / variant / "summary.parquet").exists(), variant
    assert not (res / "seed~1" / "per_query" / "pre+exact.parquet").exists()  # the untrained encoder: once
    logs = {v: pd.read_parquet(res / v / "train_log" / "ehi.parquet") for v in ("main", "seed~1")}
    assert not logs["main"].loss.equals(logs["seed~1"].loss)  # another seed trains another model


def test_kmr_table_shows_mean_and_spread_over_seeds(seeded_run):
    res = seeded_run / "results" / "test"
    long = pd.read_csv(seeded_run / "results" / "tables" / "test_kmr_seeds.csv")
    row = long[(long.system == "ehi+tree") & (long.metric == "ndcg@10") & (long.target == 1.0)].iloc[0]
    exact = [pd.read_parquet(res / v / "summary.parquet") for v in ("main", "seed~1")]
    values = [s[(s.system == "ehi+tree") & (s.metric == "ndcg@10")].sort_values("frac_visited").value.iloc[-1]
              for s in exact]
    assert row.value == pytest.approx(sum(values) / 2) and row.n_seeds == 2
    assert row["min"] == pytest.approx(min(values)) and row["max"] == pytest.approx(max(values))
    assert set(long.system) >= {"ehi-warm+tree", "de+faiss-ivf"}
    assert "±" in (seeded_run / "results" / "tables" / "test_kmr.md").read_text()
    assert (seeded_run / "results" / "figures" / "test" / "kmr_seeds_ndcg_at_10.png").exists()


def test_significance_pairs_seed_means_and_carries_the_spread(seeded_run):
    sig = pd.read_parquet(seeded_run / "results" / "test" / "significance.parquet")
    assert {"sd_a", "sd_b", "n_seeds_a", "n_seeds_b", "within_seed_spread"} <= set(sig.columns)
    tree = sig[(sig.system_a == "ehi+tree") & (sig.system_b == "de+faiss-ivf") & (sig.metric == "ndcg@10")]
    assert len(tree) and (tree.n_seeds_a == 2).all() and (tree.n_seeds_b == 2).all()
    assert "ehi-warm+tree" in set(sig.system_a)
    claims = (seeded_run / "results" / "tables" / "test_claims.md").read_text()
    assert "ehi" in claims
