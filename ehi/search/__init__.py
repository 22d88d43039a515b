"""Searching an index at a budget: ``base`` (the Searcher contract), ``config`` (the ``search``
section), ``registry`` (the ANNS kinds) with ``faiss_ann``, ``faiss_pq`` and ``scann_ann`` (the
baselines) and ``tune`` (their build parameters chosen on dev); EHI's tree as ``tree_index`` (leaves
plus tree), ``route`` (beam search in numpy), ``export``, ``export_files`` and ``exported`` (the index
as a FAISS file, EHI's one search path); ``shards`` and ``faiss_shards`` (embeddings at scale)."""
