"""Choosing the leaf count on dev: IVF's grid, grown while its top wins, under either cost model."""

import numpy as np

from ehi.train.leaf_count import MIN_DOCS_PER_LEAF, choose_leaf_count, count_cap, summary_markdown


def clustered(n_clusters=60, per=8, dim=16, seed=0, noise=0.05):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n_clusters, dim))
    docs = np.repeat(centres, per, axis=0) + noise * rng.normal(size=(n_clusters * per, dim))
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    rows = rng.choice(len(docs), 40, replace=False)
    q = docs[rows] + 0.01 * rng.normal(size=(40, dim))
    return docs.astype(np.float32), q.astype(np.float32), [np.array([r]) for r in rows]


def test_the_grid_grows_while_its_top_wins_and_stops_at_the_leaf_size_cap():
    docs, q, rel = clustered()
    chosen, table = choose_leaf_count(docs, q, rel, grid=[15, 30], seeds=(0,))
    means = table.groupby("leaves").auc.mean()
    assert chosen == means.idxmax() and table.loc[table.chosen, "leaves"].eq(chosen).all()
    assert "extended" in set(table.grid)  # 30 leaves, the top, won: the grid grew
    assert max(table.leaves) <= len(docs) // MIN_DOCS_PER_LEAF
    top = max(table.leaves)
    assert chosen < top or 2 * top > len(docs) // MIN_DOCS_PER_LEAF  # the top is binding only at the cap
    assert f"Chosen: {chosen} leaves" in summary_markdown(table, chosen, len(docs))


def test_branching_auto_passes_the_schema_for_a_one_level_tree_only():
    from pathlib import Path

    import pytest
    import yaml
    from snakemake.utils import validate

    from ehi.config_checks import check_config
    from ehi.core.errors import ConfigError

    repo = Path(__file__).resolve().parents[2]
    schema = repo / "workflow" / "schemas" / "config.schema.yaml"

    def cfg(height):
        c = yaml.safe_load((repo / "config" / "test" / "test.yaml").read_text())
        c["train"].update(branching="auto", height=height)
        c["ablations"] = {}
        validate(c, str(schema))
        return c

    check_config(cfg(1), schema)
    with pytest.raises(ConfigError, match="branching=auto chooses a one-level tree"):
        check_config(cfg(2), schema)


def test_under_the_work_cost_routing_is_paid_and_no_leaf_size_cap_binds():
    docs, q, rel = clustered(n_clusters=300)  # 2,400 documents: beam 1 of L leaves costs L + 2400 / L
    chosen, table = choose_leaf_count(docs, q, rel, grid=[25, 50], seeds=(0,), cost="work")
    assert (table.cost == "work").all() and chosen == table.groupby("leaves").auc.mean().idxmax()
    # every measured point pays its leaves' centroids: the fraction is at least leaves / N
    fracs = table.filter(like="frac@").to_numpy()
    leaves = table.leaves.to_numpy()[:, None].repeat(fracs.shape[1], axis=1)
    measured = ~np.isnan(fracs)
    assert measured.any() and (fracs[measured] * len(docs) >= leaves[measured]).all()
    # 1% of work is 24 units and L + 2400 / L >= 98 for every L: no count reaches it
    assert table["frac@0.01"].isna().all() and (table["ndcg@10@0.01"] == 0).all()
    # the stop is where routing alone passes the largest budget (10%: 240 leaves), not 4 documents a leaf
    assert count_cap(len(docs), "work") == 240 and count_cap(len(docs), "documents") == 600
    assert max(table.leaves) <= 240 and "of work" in summary_markdown(table, chosen, len(docs))
