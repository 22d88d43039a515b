"""Using a trained index: ``api`` (``ehi.load_index``, a search index on disk) with
``index_checks`` (what loading checks; what a search is asked is checked by
:mod:`ehi.search.query_args`, for every surface that searches a tree), ``cli`` (``ehi search``, ``ehi info``, ``ehi export-faiss``; its parser in
``cli_parser``) with ``queries`` (query files and query vectors) and ``formats`` (how results
print), ``compare`` (``ehi compare DIR``: the pipeline on a folder of vectors) with ``compare_config``
(which config a folder gets: the decisive comparison, or ``--quick``'s frozen study, and the tree
timed) and ``compare_run`` (its Snakemake run, checked, owned to the end and recorded when done), and ``export_faiss`` (a
trained index as a FAISS file)."""
