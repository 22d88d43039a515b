"""Tables, figures and claims from cached results only: ``tables`` (every table and figure of one
dataset, each a function of ``report_data``: its inputs read and checked once) with ``figures``, ``kmr_figures``, ``styles``, ``latex`` and ``latex_fit`` (tables set to fit the text
width), ``train_log``, ``step_figure`` (a training's step log), ``seed_tables`` and
``significance_table``; ``across`` (one table across datasets), ``claims`` (the paper's claims
against our numbers), ``missing`` (what a report-only run lacks) and ``gain`` (the scale study's
gain of the tree over k-means IVF at equal work, reading the files ``gain_inputs`` names) with ``gain_scaling`` (that gain against N and
training queries a leaf) and ``gain_properties`` (that gain beside what ``collection_properties``
measures of a collection before training), ``world_fit`` (the synthetic world's vectors and KMR shapes beside real
collections') with ``world_calibration`` (the world's knobs held to a real collection's facts),
``dev_choice`` (training settings chosen on dev: a grid's points, or a setting spread over
datasets), ``summary_checks`` (a summary's values checked before they are rendered), ``noise`` (where a
result is noise, said in one line), ``answer`` (``ehi compare``'s answer in one paragraph), ``compare_check`` (a run of ``ehi compare`` held to the committed study it repeats), ``reproduction`` (a rerun held against the committed results) with
``cell_diff`` (where two versions of a result file differ) under ``golden_tolerances`` (the golden
test's tolerances) and ``report_files`` (the committed files a dataset owns, and what a render may not take from another
config)."""
