"""The two learned parts: ``encoder`` (the shared text encoder; ``hub``, ``encoder_checks`` and
``st_format`` for where it comes from, whether it is whole and how sentence-transformers loads it;
``layer_cache`` for frozen bottom layers) and ``tree`` (EHI's indexer; ``path_layouts`` its path embeddings' layouts, ``tree_init`` its k-means warm
start, ``tree_stats`` its health); ``embed`` and ``embed_cache`` embed a corpus once and cache it; ``encode_collection`` encodes
a text collection once into an embeddings folder; ``tower`` is the encoder of precomputed vectors,
``tower_checks`` what a tower folder must hold to serve a dataset."""
