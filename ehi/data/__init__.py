"""Datasets: ``sources`` (the source table: names, remotes, parsers named as strings) with the
parsers ``beir``, ``formats`` (MS MARCO, NQ320k, XMC), ``embeddings`` and ``irds`` (ir_datasets);
``download`` (fetching and safe extraction), ``prepare`` (one entry point from a config),
``dataset`` (the in-memory form), ``validate``, ``input_counts`` and ``judgements`` (the shared
checks and rules), ``splits`` and ``query_split`` (seeded dev and test splits), ``manifest`` (what a
prepared dataset came from), ``facts`` (its sizes kept beside its results), ``synthetic`` and
``vector_world`` (the generated corpora, the world's knobs checked by ``world_checks``), ``produced``
(the folders the DAG builds, encodes or generates for a dataset to read) and ``collection_build``
(a collection built aside and moved into place whole, kept while its script and arguments are
unchanged)."""
