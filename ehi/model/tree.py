"""EHI's learned tree index: routes an embedding down a tree of height H and branching B.

At level h (0-based) the node's input is the embedding x and the one-hot id of the parent node:
``z_h = U_h x`` (affine), ``logits_h = W_h [one_hot(parent); z_h]``, ``p_h = softmax(logits_h)``
over the B children. Training follows the argmax child; a node's probability is the product of the
conditional probabilities on its path. Leaves are numbered 0..B^H-1 in mixed radix (the path's
child indices, most significant first), so a node's id at level h+1 is ``parent * B + child``.

``W_h [one_hot(parent); z]`` equals ``W_h[:, parent] + W_h[:, B^h:] z``: the code gathers the
parent's column instead of materialising the one-hot, which is the same product at a fraction of
the memory (B^h can be large).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import save_file
from torch import nn

from ehi.core.errors import ConfigError
from ehi.core.io import atomic_path, read_json_object
from ehi.core.weights import WeightsError, load_weights
from ehi.model.path_layouts import PATH_LAYOUTS

# Default "node": two items routed into different subtrees never match at a deeper level by
# accident (under "frontier" the level-2 block of child j of node 1 and of node 2 share a slot),
# so cos(T(q), T(d)) is high only when the paths really coincide. Training never materialises the
# node layout (see :func:`ehi.train.losses.objective.path_cosine`), so its length B + ... + B^H costs nothing there.
DEFAULT_LAYOUT = "node"


def check_leaves_fit(n_leaves: int, n_docs: int, height: int, branching: int,
                     names: str = "train.height or train.branching") -> None:
    """A tree with more leaves than documents must leave leaves empty: refuse it up front, naming
    the settings to lower as the caller knows them (config keys, or a function's arguments)."""
    if n_leaves > n_docs:
        raise ConfigError(f"tree height={height}, branching={branching} has {n_leaves} leaves but the corpus "
                         f"has only {n_docs} documents; lower {names}")


@dataclass
class TreeOutput:
    """One forward pass along the argmax path. n items, H levels, B children per node."""

    probs: torch.Tensor  # (n, H, B) conditional child probabilities at the followed parent
    frontier: torch.Tensor  # (n, H, B) path probability of each child of the followed parent
    path: torch.Tensor  # (n, H) int64 followed child index per level
    leaf: torch.Tensor  # (n,) int64 leaf id in 0..B^H-1

    def embedding(self, layout: str = DEFAULT_LAYOUT) -> torch.Tensor:
        """The path embedding T(x): (n, B*H) for "frontier", (n, B + B^2 + ... + B^H) for "node"."""
        n, height, branching = self.frontier.shape
        if layout == "frontier":
            return self.frontier.reshape(n, height * branching)
        if layout != "node":
            raise ValueError(f"path_layout must be one of {PATH_LAYOUTS}, got {layout!r}")
        blocks, parent = [], torch.zeros(n, dtype=torch.long, device=self.path.device)
        for h in range(height):
            block = self.frontier.new_zeros(n, branching ** (h + 1))  # (n, B^(h+1))
            cols = parent[:, None] * branching + torch.arange(branching, device=parent.device)
            blocks.append(block.scatter(1, cols, self.frontier[:, h]))
            parent = parent * branching + self.path[:, h]
        return torch.cat(blocks, dim=1)



def cat_trees(a: TreeOutput, b: TreeOutput) -> TreeOutput:
    """Rows of ``a`` then rows of ``b``."""
    return TreeOutput(torch.cat([a.probs, b.probs]), torch.cat([a.frontier, b.frontier]),
                      torch.cat([a.path, b.path]), torch.cat([a.leaf, b.leaf]))


def rows_of(table: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """``table[index]`` for an integer ``index`` of any shape, with a backward that is the same
    on every thread count. ``table[index]``'s backward is ``index_put_(accumulate=True)``, which
    on CPU adds the rows' gradients with atomics across threads: at 8 threads the per-node tree's
    gradients differed from run to run. ``index_select``'s backward (``index_add_``) adds them in
    index order, as the one-thread ``index_put_`` does."""
    picked = table.index_select(0, index.reshape(-1))
    return picked.view(*index.shape, *table.shape[1:])


class TreeIndexer(nn.Module):
    """The tree of the module docstring; ``hidden`` is the width of U_h x (default: ``dim``)."""

    def __init__(self, dim: int, height: int = 2, branching: int = 8, hidden: int | None = None,
                 path_layout: str = DEFAULT_LAYOUT, per_node: bool = False):
        super().__init__()
        if height < 1 or branching < 2:
            raise ValueError(f"need height >= 1 and branching >= 2, got H={height}, B={branching}")
        if path_layout not in PATH_LAYOUTS:
            raise ValueError(f"path_layout must be one of {PATH_LAYOUTS}, got {path_layout!r}")
        self.dim, self.height, self.branching = int(dim), int(height), int(branching)
        self.hidden = int(hidden or dim)
        self.path_layout = path_layout
        self.U = nn.ModuleList(nn.Linear(self.dim, self.hidden) for _ in range(height))
        # W_h acts on [one_hot(parent) (B^h); z_h (hidden)]
        self.W = nn.ModuleList(nn.Linear(branching**h + self.hidden, branching) for h in range(height))
        # Option beyond the paper (``per_node``): in the paper's form the parent enters level h only
        # through its one-hot column, i.e. as a per-parent *bias*; all B^h parents split their
        # region with the same B directions W_h[:, B^h:]. With ``per_node`` each parent p adds its
        # own residual Delta_h[p] (B, hidden) to those directions, so every node has its own child
        # classifier (as in hierarchical k-means). Delta starts at zero: the initial tree is the
        # same as without the option, and weight decay pulls Delta back towards the shared W_h.
        self.per_node = bool(per_node)
        self.node_delta = nn.ParameterList(
            nn.Parameter(torch.zeros(branching**h, branching, self.hidden)) for h in range(height)
        ) if self.per_node else None

    @torch.no_grad()
    def standardize_(self, emb: np.ndarray | torch.Tensor) -> "TreeIndexer":
        """Data-dependent initialisation: rescale each U_h so that z_h = U_h x has zero mean and unit
        variance per unit over ``emb`` (N, dim), and zero the W_h biases.

        Why: sentence embeddings are anisotropic (they share a large common component) and at
        PyTorch's default init the logits' biases outweigh their data-dependent part, so a fresh
        tree sends nearly every document to one leaf and training starts from a collapsed index.
        Centred, unit-scale z makes the initial tree a set of random hyperplanes through the data.
        This is not a k-means warm start: no cluster is fitted, the directions stay random.
        """
        x = torch.as_tensor(emb, dtype=torch.float32).to(next(self.parameters()).device)
        for u, w in zip(self.U, self.W):
            z = u(x)  # (N, hidden)
            mean, std = z.mean(0), z.std(0).clamp(min=1e-6)
            u.weight.div_(std[:, None])
            u.bias.sub_(mean).div_(std)
            w.bias.zero_()
        return self

    @property
    def n_leaves(self) -> int:
        return self.branching**self.height

    def config(self) -> dict:
        out = {"dim": self.dim, "height": self.height, "branching": self.branching,
               "hidden": self.hidden, "path_layout": self.path_layout}
        if self.per_node:  # written only when set, so default indexers keep their old indexer.json
            out["per_node"] = True
        return out

    def level_logits(self, h: int, x: torch.Tensor, parents: torch.Tensor) -> torch.Tensor:
        """Child logits at level h for x (n, dim) under parents (n, m) -> (n, m, B)."""
        n_parent = self.branching**h
        weight = self.W[h].weight  # (B, B^h + hidden)
        z = self.U[h](x)  # (n, hidden)
        shared = z @ weight[:, n_parent:].T + self.W[h].bias  # (n, B)
        out = shared[:, None, :] + rows_of(weight[:, :n_parent].T, parents)  # (n, m, B)
        if self.per_node:
            out = out + torch.einsum("nmbk,nk->nmb", rows_of(self.node_delta[h], parents), z)
        return out

    def forward(self, x: torch.Tensor) -> TreeOutput:
        """Route x (n, dim) along the argmax path, keeping the graph through the probabilities."""
        n = x.shape[0]
        node = torch.zeros(n, dtype=torch.long, device=x.device)
        reach = x.new_ones(n)  # (n,) probability of the current node
        probs, frontier, path = [], [], []
        for h in range(self.height):
            p = torch.softmax(self.level_logits(h, x, node[:, None])[:, 0], dim=-1)  # (n, B)
            child = p.argmax(dim=-1)  # (n,)
            probs.append(p)
            frontier.append(reach[:, None] * p)
            path.append(child)
            reach = reach * p.gather(1, child[:, None])[:, 0]
            node = node * self.branching + child
        return TreeOutput(torch.stack(probs, 1), torch.stack(frontier, 1), torch.stack(path, 1), node)

    def path_embedding(self, x: torch.Tensor, layout: str | None = None) -> torch.Tensor:
        return self(x).embedding(layout or self.path_layout)

    @torch.no_grad()
    def assign_leaves(self, emb: np.ndarray | torch.Tensor, batch_size: int = 4096) -> np.ndarray:
        """Argmax leaf of each row of emb (N, dim) -> (N,) int64."""
        device = next(self.parameters()).device
        emb = torch.as_tensor(emb)
        out = np.empty(len(emb), dtype=np.int64)
        for start in range(0, len(emb), batch_size):
            chunk = emb[start : start + batch_size].to(device=device, dtype=torch.float32)
            out[start : start + len(chunk)] = self(chunk).leaf.cpu().numpy()
        return out

    @torch.no_grad()
    def beam_search(self, queries: torch.Tensor, beam: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The ``beam`` most probable leaves of each query (n, dim) -> leaf ids (n, beam) and their
        path log-probabilities (n, beam), most probable first. Each level keeps the ``beam`` most
        probable nodes, so beam = B^H keeps every leaf (exact search)."""
        if not 1 <= beam <= self.n_leaves:
            raise ValueError(f"beam must be in 1..B^H={self.n_leaves}, got {beam}")
        queries = queries.to(next(self.parameters()).device, torch.float32)
        n = queries.shape[0]
        nodes = torch.zeros(n, 1, dtype=torch.long, device=queries.device)  # (n, m) kept nodes
        logp = queries.new_zeros(n, 1)  # (n, m)
        for h in range(self.height):
            child_logp = torch.log_softmax(self.level_logits(h, queries, nodes), dim=-1)  # (n, m, B)
            cand = (logp[:, :, None] + child_logp).flatten(1)  # (n, m*B)
            children = torch.arange(self.branching, device=queries.device)
            cand_nodes = (nodes[:, :, None] * self.branching + children).flatten(1)  # (n, m*B) their ids
            # the most probable first, an exact tie to the lower node id (a stable sort of the
            # candidates in id order), so every kernel path and the numpy router keep the same nodes
            by_id = cand_nodes.argsort(dim=1)
            keep = by_id.gather(1, torch.sort(-cand.gather(1, by_id), dim=1, stable=True).indices)
            keep = keep[:, : min(beam, cand.shape[1])]  # (n, m')
            logp, nodes = cand.gather(1, keep), cand_nodes.gather(1, keep)
        return nodes, logp

    def save(self, out_dir: str | os.PathLike) -> None:
        """Write ``indexer.safetensors`` (weights) and ``indexer.json`` (shape) into ``out_dir``."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        tensors = {k: v.detach().cpu().contiguous() for k, v in self.state_dict().items()}
        with atomic_path(out / "indexer.safetensors") as tmp:
            save_file(tensors, str(tmp))
        with atomic_path(out / "indexer.json") as tmp:
            tmp.write_text(json.dumps(self.config(), indent=2, sort_keys=True) + "\n")


def load_indexer(in_dir: str | os.PathLike, device: str | torch.device = "cpu") -> TreeIndexer:
    """Rebuild a :class:`TreeIndexer` from ``indexer.json`` + ``indexer.safetensors`` (no pickle)."""
    src = Path(in_dir)
    spec = read_json_object(src / "indexer.json", WeightsError)
    try:
        indexer = TreeIndexer(**spec)
    except (TypeError, ValueError) as err:  # keys or values of no tree this code builds
        raise WeightsError(f"{src / 'indexer.json'}: not a tree configuration ({err})") from None
    load_weights(indexer, src / "indexer.safetensors")  # names a truncated file or a shape mismatch
    return indexer.to(device)
