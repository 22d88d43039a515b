"""EHI's training objective: L = λ1·L_siamese + λ2·L_indexing + λ3·L_intra-leaf.

L_siamese is any pairwise loss of :mod:`ehi.train.losses.registry` on the embeddings; L_indexing
the triplet form on the path embeddings T(q), T(d) (:func:`path_cosine`); L_intra-leaf the triplet
form restricted to negatives sharing the positive's leaf.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ehi.model.tree import TreeOutput, cat_trees
from ehi.train.losses.pairwise import triplet_loss
from ehi.train.losses.registry import SHARED_DENOMINATOR, SIAMESE_LOSSES


def path_cosine(a: TreeOutput, b: TreeOutput, layout: str = "node") -> torch.Tensor:
    """cos(T(a_i), T(b_j)) for all pairs -> (n, m), without materialising T.

    Both layouts hold the same non-zero values (the frontier blocks), so the norms agree; they
    differ only in which blocks overlap. Under "node" the level-h blocks of two items share slots
    only when their parents at level h coincide, i.e. when their paths agree on levels < h.
    """
    dots = torch.einsum("nhb,mhb->nmh", a.frontier, b.frontier)  # (n, m, H)
    if layout == "node":
        same = (a.path[:, None, :] == b.path[None, :, :]).to(dots.dtype)  # (n, m, H)
        same_parent = torch.cumprod(torch.cat([torch.ones_like(same[..., :1]), same[..., :-1]], -1), -1)
        dots = dots * same_parent
    elif layout != "frontier":
        raise ValueError(f"unknown path layout {layout!r}")
    norm_a = a.frontier.flatten(1).norm(dim=1)  # (n,)
    norm_b = b.frontier.flatten(1).norm(dim=1)  # (m,)
    return dots.sum(-1) / (norm_a[:, None] * norm_b[None, :]).clamp(min=1e-12)


def indexing_loss(q_tree: TreeOutput, d_tree: TreeOutput, pos_idx, mask, *, margin=0.1, layout="node"):
    """Triplet loss on path-embedding cosine: pull a query and its positive into the same leaf,
    push the negatives out of it (which is also what balances the leaves)."""
    sim = path_cosine(q_tree, d_tree, layout)  # (n, m)
    pos = sim.gather(1, pos_idx[:, None])[:, 0]  # (n,)
    return triplet_loss(pos, sim, mask, margin=margin)


def neighbour_loss(anchor: TreeOutput, neighbour: TreeOutput, *, temperature: float = 0.3,
                   layout: str = "node") -> torch.Tensor:
    """InfoNCE on path-embedding cosine between documents (an option beyond the paper).

    ``anchor`` and ``neighbour`` are the trees of m anchor documents and of one embedding-space
    nearest neighbour of each (row i of ``neighbour`` belongs to anchor i). Each anchor is pulled
    towards its own neighbour's path and pushed from the other anchors' neighbours.

    Why: L_indexing only shapes the routing of the training queries and of the documents they name;
    the rest of the corpus, and every unseen query, is routed wherever the tree happens to send it,
    so the tree memorises training pairs. Asking every document to share a path with its nearest
    neighbours makes the partition follow the geometry of the embedding space, which is what lets a
    held-out query reach its (nearby) positive. It needs no labels.
    """
    sim = path_cosine(anchor, neighbour, layout)  # (m, m): column j = neighbour of anchor j
    return F.cross_entropy(sim / temperature, torch.arange(len(sim), device=sim.device))


def intra_leaf_loss(pos, neg, mask, doc_leaf, pos_idx, *, margin: float = 0.1):
    """Triplet loss on encoder similarities, restricted to negatives in the positive's leaf.

    Why this form: once the query reaches the positive's leaf, the index ranks that leaf's documents
    by the encoder's inner product, so the ranking that matters is the positive against its leaf
    mates. L_siamese spreads its gradient over every negative of the batch, most of which sit in
    other leaves and never compete with the positive at search time; this term concentrates it on
    the ones that do. Leaves are discrete (argmax), so the mask carries no gradient.
    ``doc_leaf`` (m,) is the current leaf of each batch document.
    """
    same_leaf = doc_leaf[None, :] == doc_leaf[pos_idx][:, None]  # (n, m)
    return triplet_loss(pos, neg, mask & same_leaf, margin=margin)


def ehi_loss(q_emb, d_emb, pos_idx, mask, q_tree=None, d_tree=None, *, lambda_siamese=1.0,
             lambda_indexing=1.0, lambda_intra_leaf=1.0, siamese_loss="triplet", margin=0.1,
             margin_indexing=0.1, temperature=0.05, path_layout="node",
             positive_mask=None, corpus_tree=None, corpus_mask=None) -> dict[str, torch.Tensor]:
    """The weighted EHI loss and each term. Without trees (the DE baseline) only L_siamese counts.

    q_emb (n, d) and d_emb (m, d) unit-norm embeddings; pos_idx (n,) the column of each query's
    positive in d_emb; mask (n, m) valid negatives; q_tree / d_tree the indexer outputs or None;
    positive_mask (n, m) the batch documents judged relevant to each row's query (needed only by
    the "softmax" form of L_siamese); corpus_tree / corpus_mask (n, c) extra negatives for
    L_indexing only (``train.indexing_negatives``: corpus documents through the tree).
    """
    sim = (q_emb @ d_emb.T).float()  # (n, m) cosine: the encoder outputs unit-norm vectors
    pos = sim.gather(1, pos_idx[:, None])[:, 0]  # (n,)
    fn = SIAMESE_LOSSES[siamese_loss]
    siamese_mask = mask
    if siamese_loss in SHARED_DENOMINATOR:
        if positive_mask is None:
            raise ValueError(f"siamese_loss={siamese_loss!r} needs positive_mask (the batch's other positives)")
        own = torch.zeros_like(mask, dtype=torch.bool)
        own[torch.arange(len(pos_idx)), pos_idx] = True
        siamese_mask = mask | (positive_mask.bool() & ~own)  # the other positives join the denominator
    terms = {"siamese": fn(pos, sim, siamese_mask, margin=margin, temperature=temperature)}
    zero = sim.new_zeros(())
    use_tree = q_tree is not None and d_tree is not None
    index_tree, index_mask = d_tree, mask
    if use_tree and corpus_tree is not None:  # columns after the batch: pos_idx still points inside it
        index_tree, index_mask = cat_trees(d_tree, corpus_tree), torch.cat([mask, corpus_mask.bool()], dim=1)
    terms["indexing"] = (indexing_loss(_float(q_tree), _float(index_tree), pos_idx, index_mask,
                                       margin=margin_indexing, layout=path_layout)
                         if use_tree and lambda_indexing else zero)
    terms["intra_leaf"] = (intra_leaf_loss(pos, sim, mask, d_tree.leaf, pos_idx, margin=margin)
                           if use_tree and lambda_intra_leaf else zero)
    total = (lambda_siamese * terms["siamese"] + lambda_indexing * terms["indexing"]
             + lambda_intra_leaf * terms["intra_leaf"])
    return {"loss": total, **terms}


def _float(tree: TreeOutput) -> TreeOutput:
    # Under autocast the indexer may run in bf16; compare paths in float32.
    return TreeOutput(tree.probs.float(), tree.frontier.float(), tree.path, tree.leaf)
