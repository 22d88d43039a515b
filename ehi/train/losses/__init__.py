"""EHI's losses: ``objective`` (L = λ1·L_siamese + λ2·L_indexing + λ3·L_intra-leaf), the
L_siamese forms of ``pairwise`` and ``dexml``, and their registry (``registry``, with the light
name table ``names`` the config checks read)."""
