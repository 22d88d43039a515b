"""The benchmarks' label-free tree: :mod:`ehi.train.label_free`, which :func:`ehi.fit_tree` shares."""

from ehi.train.label_free import train_tree, tree_shape  # noqa: F401
