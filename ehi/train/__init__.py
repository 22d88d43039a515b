"""Training EHI and the DE baseline: ``config`` (every hyper-parameter; ``model_keys`` which model
reads which), ``loop`` (one loop for both), ``step`` (one batch), ``batches`` and ``negatives`` (what
a step reads), ``losses`` (the objective and the L_siamese registry), ``checkpoint``,
``distributed`` and ``grad_cache`` (resumable, data-parallel, micro-batched), ``progress`` and
``step_log`` (the lines a person follows, the step-by-step log of leaves and gradients),
``dev_eval``, ``dev_curve`` and ``selection`` (dev evaluation and the epoch kept), ``neighbours``,
``tree_updates``, ``tree_fit`` and ``label_free`` (the tree trained alone), ``tree_shape`` and
``leaf_count`` (the tree's shape chosen on dev), ``grid`` (train keys chosen on dev, a grid's
points and the seeds trained at its choice), ``job`` (one training job as the rules run it: its settings
resolved, the frozen layers' cache shared, the results' epoch log)."""
