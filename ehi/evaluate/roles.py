"""What a system is, read from the registry, never from its name: EHI's own tree search, an
exhaustive one, and which of a table's systems the paper's questions are asked of.

A system is ``{encoder}+{search}`` (docs/systems_and_metrics.md). Its search's registry entry
(:mod:`ehi.search.registry`) says whether it is EHI's own search (``ehi_search``: the tree, plain
or over PQ codes, or a plugin's kind marked so) and whether its searcher sweeps a budget or scores
every document (:func:`ehi.search.registry.budgeted`). So a tree registered under another name, or a
``tree-pq`` ablation, is read as a tree everywhere the report and the statistics ask, with no
name list to extend. The encoders (``ehi``, ``de``, ``pre``) are the config's own names.
"""

from __future__ import annotations

EHI, DE = "ehi", "de"  # the jointly trained encoder and the dual encoder (ehi.search.registry.ENCODERS)
PRE = "pre"  # the untrained encoder: the vectors as given
# the roles :func:`role` gives (the significance tests' questions, the tables' "tree" and "exact"
# columns); they are role labels, not kind names, whatever the registry calls its kinds
ROLE_TREE, ROLE_EXACT, ROLE_BASELINE = "tree", "exact", "baseline"


def encoder_of(system: str) -> str:
    return system.split("+", 1)[0]


def search_of(system: str) -> str:
    """The search half of a system name (its registry kind): ``de+faiss-ivf`` -> ``faiss-ivf``."""
    return system.split("+", 1)[1]


def _kind(system: str):
    from ehi.search.registry import ann_kind  # here: the registry loads the plugins on first use

    return ann_kind(search_of(system))


def is_tree(system: str) -> bool:
    """EHI's own search of its trained index (a registry entry marked ``ehi_search``)."""
    return _kind(system).ehi_search


def is_exact(system: str) -> bool:
    """A search that scores every document (its searcher has no budget to sweep)."""
    from ehi.search.registry import budgeted

    return not budgeted(system)


def is_compressed(system: str) -> bool:
    """A search that scores PQ codes (its kind reads the ``search.pq_*`` settings)."""
    from ehi.search.registry import PQ_SETTINGS

    return bool(set(PQ_SETTINGS) & set(_kind(system).settings_keys))


def routes_over_lists(system: str) -> bool:
    """A partition index: it routes each query to lists and scores the documents there (EHI's tree,
    the tree's lists, any kind that reads a list count such as IVF's or ScaNN's), as its kind says."""
    kind = _kind(system)
    return kind.ehi_search or kind.tree_lists or kind.reads_list_counts()


def is_tree_lists(system: str) -> bool:
    """The IVF control of a tree: k-means lists as many as the tree's leaves (its kind's ``tree_lists``)."""
    return _kind(system).tree_lists


def is_graph(system: str) -> bool:
    """A budgeted search that is no partition (HNSW): every distance it computes counts as a document."""
    return not is_exact(system) and not routes_over_lists(system)


def _registry_order(systems) -> list[str]:
    """Flat scoring before PQ codes, then the registry's order, then the name."""
    from ehi.search.registry import searches

    order = {name: i for i, name in enumerate(searches())}
    return sorted(systems, key=lambda s: (is_compressed(s), order.get(s.split("+", 1)[1], len(order)), s))


def main_tree(systems, encoder: str = EHI) -> str | None:
    """The tree the paper's questions are asked of: ``encoder``'s first tree search among
    ``systems``, one scoring its leaves flat before one over PQ codes, then in the registry's
    order; None if it has none."""
    trees = [s for s in systems if encoder_of(s) == encoder and is_tree(s)]
    return next(iter(_registry_order(trees)), None)


def exact_of(systems, encoder: str) -> str | None:
    """``encoder``'s exhaustive search among ``systems`` (EHI's exact search, the DE's), or None."""
    exact = [s for s in systems if encoder_of(s) == encoder and not is_tree(s) and is_exact(s)]
    return next(iter(_registry_order(exact)), None)


def role(system: str) -> str:
    """How the significance tests treat a system: ROLE_TREE, ROLE_EXACT or ROLE_BASELINE."""
    return ROLE_TREE if is_tree(system) else ROLE_EXACT if is_exact(system) else ROLE_BASELINE
