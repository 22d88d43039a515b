"""The layouts of a tree path embedding (:class:`ehi.model.tree.TreeIndexer`), named apart from the
tree so that the training config checks them without importing torch (the Snakefile builds every
variant's :class:`ehi.train.config.TrainConfig` while it parses)."""

PATH_LAYOUTS = ("node", "frontier")
