"""From runs to numbers: ``config`` (the ``evaluation`` section), ``sweep`` (one system at every
budget), ``metrics`` and ``metric_registry`` (per-query metrics by name, ranx's and registered
ones such as ``xmc``'s psp@k), ``stats`` (paired significance tests), ``seeds`` (seeds as a
dimension), ``variant_systems`` (ablation systems beside the main setting), ``trec`` (TREC run
files), ``dev_tuning`` and ``tree_recipe`` (how the recipe was chosen on dev)."""
