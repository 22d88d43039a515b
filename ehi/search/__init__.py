"""Searching an index at a budget: ``base`` (the Searcher contract), ``config`` (the ``search``
section), ``registry`` (every search kind, EHI's tree included) with ``faiss_ann``, ``faiss_pq`` and
``scann_ann`` (the baselines), ``factory_kinds`` and ``faiss_factory`` (any FAISS index by its
factory string), ``partition`` (a partitioner's lists as a searcher), ``ivf_lists`` (the tree's IVF control:
k-means lists as many as its leaves), ``grids`` (the kinds' build candidates) and ``tune``
(build parameters chosen on dev); EHI's tree as ``tree_index`` (leaves plus tree, saved with its
FAISS export; what its search is asked, checked by ``query_args``), ``tree_search`` (the tree's
registry searches), ``route`` (beam search in numpy),
``export``, ``export_files`` and ``exported`` (the index as a FAISS file, EHI's one search path),
``budget_beam`` (the beam at the dev budget, which an export opens at);
``shards`` and ``faiss_shards`` (embeddings at scale)."""
