"""From runs to numbers: ``config`` (the ``evaluation`` section), ``sweep`` (one system at every
budget), ``metrics`` and ``metric_registry`` (per-query metrics by name: registered families, the
ranking metrics of ``native_scorers`` and the psp@k of ``xmc``, ranx for any other name), ``result_checks`` (a per-query table or summary refused where it is read),
``stats`` (paired significance tests) with ``ablation_tests`` (each ablation row against the main
setting, rule ablation_significance), ``roles`` (which systems are trees and which exact, from the
registry), ``seeds`` (seeds as a dimension), ``variant_systems``
(ablation systems beside the main setting), ``trec`` (TREC run files) with ``trec_eval`` (trec_eval's measures and flags over pytrec_eval), ``dev_tuning`` and
``tree_recipe`` (how the recipe was chosen on dev)."""
