"""The dev curve selection (select_metric: kmr_auc) and the k-means floor (floor: kmeans)."""

import numpy as np
import pytest
import torch

from ehi.core.errors import ConfigError
from ehi.model.encoder import load_encoder
from ehi.model.tree import TreeIndexer, load_indexer
from ehi.train.batches import TrainData, refresh_cache
from ehi.train.config import TrainConfig
from ehi.train.dev_curve import AUC_BUDGETS, floor_candidates, kmeans_tree, tree_curve
from ehi.train.dev_eval import ranking_metrics, top_rows
from ehi.train.loop import train
from ehi.train.selection import log_selection_key


def blobs(n_docs=400, n_q=30, dim=16, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(20, dim))
    docs = centres[rng.integers(0, 20, n_docs)] + 0.3 * rng.normal(size=(n_docs, dim))
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    rows = rng.choice(n_docs, n_q, replace=False)
    q = docs[rows] + 0.05 * rng.normal(size=(n_q, dim))
    relevant = [np.array([r]) for r in rows]
    return docs.astype(np.float32), q.astype(np.float32), relevant


def test_curve_reads_each_budget_at_its_largest_point_and_averages_them():
    docs, q, rel = blobs()
    tree = kmeans_tree(TreeIndexer(16, 1, 20), docs)
    leaf = tree.assign_leaves(docs)
    out = tree_curve(tree, q, docs, leaf, rel, "t", budgets=(0.1, 0.2, 1.0))
    assert out["t_auc"] == pytest.approx(np.mean([out[f"t_ndcg@10@{b:g}"] for b in (0.1, 0.2, 1.0)]))
    assert all(out[f"t_frac@{b:g}"] <= b + 1e-12 for b in (0.1, 0.2, 1.0))
    # every leaf in the beam: the tree is exact search
    assert out["t_ndcg@10@1"] == pytest.approx(ranking_metrics(top_rows(q @ docs.T), rel)["ndcg@10"])
    # the 10% point by hand: the largest measured fraction over every beam
    sizes = np.bincount(leaf, minlength=20)
    fracs = [sizes[tree.beam_search(torch.from_numpy(q), b)[0].numpy()].sum(1).mean() / len(docs) for b in range(1, 21)]
    assert out["t_frac@0.1"] == pytest.approx(max(f for f in fracs if f <= 0.1))


def collapsed(dim=16, leaves=20) -> TreeIndexer:
    """Every document and query routed to leaf 0 first: the smallest beam scores the whole corpus."""
    tree = TreeIndexer(dim, 1, leaves)
    with torch.no_grad():
        for p in tree.parameters():
            p.zero_()
        tree.W[0].bias[0] = 10.0
    return tree


def test_a_budget_no_point_reaches_scores_zero_and_leaf_balance_is_logged():
    docs, q, rel = blobs()
    tree = collapsed()
    out = tree_curve(tree, q, docs, tree.assign_leaves(docs), rel, "t")
    assert out["t_auc"] == 0.0 and np.isnan(out["t_frac@0.01"])
    assert out["t_leaf_empty"] == 19 and out["t_leaf_max_over_mean"] == pytest.approx(20.0)


def test_floor_prefers_the_kmeans_tree_over_a_collapsed_one_without_touching_the_rng():
    docs, q, rel = blobs()
    bad = collapsed()
    state = torch.get_rng_state()
    out, kept = floor_candidates(bad, q, docs, bad.assign_leaves(docs), rel, floor="kmeans")
    assert torch.equal(state, torch.get_rng_state())  # the training run's stream is untouched
    assert out["dev_floor_kmeans"] == 1.0 and kept is not None
    assert out["dev_floor_auc"] == out["dev_kmeans_auc"] > 0
    # a tree is never replaced by an equal one: the k-means tree against itself keeps the trained
    km = kmeans_tree(bad, docs)
    out, kept = floor_candidates(km, q, docs, km.assign_leaves(docs), rel, floor="kmeans")
    assert kept is None and out["dev_floor_kmeans"] == 0.0
    assert set(f"dev_kmeans_ndcg@10@{b:g}" for b in AUC_BUDGETS) <= set(out)


def test_config_keys_and_refusals():
    assert TrainConfig(select_metric="kmr_auc").selection_key == "dev_tree_auc"
    assert TrainConfig(select_metric="kmr_auc", floor="kmeans").selection_key == "dev_floor_auc"
    assert TrainConfig(select_metric="kmr_auc", floor="kmeans", use_tree=False).selection_key == "dev_ndcg@10"
    assert TrainConfig().selection_key == "dev_tree_ndcg@10" and not TrainConfig().dev_curve
    with pytest.raises(ConfigError, match="floor"):
        TrainConfig(floor="kmeans")
    assert log_selection_key(["dev_ndcg@10", "dev_tree_ndcg@10", "dev_tree_auc"]) == "dev_tree_auc"


def test_training_keeps_the_kmeans_tree_where_it_wins_on_dev(tiny_dataset, tmp_path):
    # nothing trains (lr 0) and the tree starts random: the floor's k-means tree is the candidate to beat
    cfg = TrainConfig(epochs=1, batch_size=8, height=1, branching=32, max_length=16, lr_encoder=0.0,
                      lr_indexer=0.0, device="cpu", encode_batch_size=32, dev_eval=True, select="dev",
                      select_metric="kmr_auc", floor="kmeans")
    enc = load_encoder("tiny-random", max_length=16, device="cpu", seed=0)
    summary = train(tiny_dataset, enc, cfg, tmp_path, progress=False)
    best = summary["selected_epoch"]
    log = {r["epoch"]: r for r in __import__("pandas").read_parquet(tmp_path / "train_log.parquet").to_dict("records")}
    assert best == max(log, key=lambda e: (log[e]["dev_floor_auc"], -e))
    saved = load_indexer(tmp_path)
    data = TrainData.from_dataset(tiny_dataset, "train")
    doc_emb = refresh_cache(data, enc, saved, cfg).doc_emb
    assert log[best]["dev_floor_kmeans"] == 1.0 and summary["selected_tree"] == "kmeans"
    # the saved index is that k-means tree: the pipeline searches it as ehi+tree
    expect = kmeans_tree(saved, doc_emb)
    assert all(torch.equal(a, b) for a, b in zip(saved.state_dict().values(), expect.state_dict().values()))


def test_the_floors_tree_is_faiss_ivf_with_as_many_lists_leaf_for_leaf_and_in_probe_order():
    from ehi.search.faiss_ann import IVFSearcher

    docs, q, _ = blobs()
    tree = kmeans_tree(TreeIndexer(16, 1, 20), docs)
    ivf = IVFSearcher.build(docs, nlist=20)
    _, lists = ivf.quantizer.search(q, 5)  # the 5 lists nprobe=5 visits, nearest first
    np.testing.assert_array_equal(tree.beam_search(torch.from_numpy(q), 5)[0].numpy(), lists)
    _, doc_lists = ivf.quantizer.search(docs, 1)
    np.testing.assert_array_equal(tree.assign_leaves(docs), doc_lists[:, 0])


def test_indexer_init_ivf_starts_the_tree_as_the_floors_ivf_partition(tiny_dataset, tmp_path):
    cfg = TrainConfig(epochs=1, batch_size=8, height=1, branching=16, max_length=16, lr_encoder=0.0,
                      lr_indexer=0.0, device="cpu", encode_batch_size=32, indexer_init="ivf", diagnostics=False)
    enc = load_encoder("tiny-random", max_length=16, device="cpu", seed=0)
    train(tiny_dataset, enc, cfg, tmp_path, progress=False)  # nothing moves at lr 0: the start is the result
    saved = load_indexer(tmp_path)
    doc_emb = refresh_cache(TrainData.from_dataset(tiny_dataset, "train"), enc, saved, cfg).doc_emb
    np.testing.assert_array_equal(saved.assign_leaves(doc_emb), kmeans_tree(saved, doc_emb).assign_leaves(doc_emb))
