"""Checks of the ``encodings`` entries run while the Snakefile is parsed (``snakemake -n`` included).

An encoding's encoder is resolved as ``encoder.name`` is (:func:`ehi.core.config_values.encoder_dim`):
a mistyped one is refused naming ``encodings.<name>.encoder`` before any job runs, instead of
failing in the job that would re-encode the collection.
"""

from __future__ import annotations

from ehi.core.errors import ConfigError

DEFAULT_ENCODER = "all-MiniLM-L6-v2"  # the schema's default of an encodings entry's encoder


def check_encodings(encodings: dict) -> None:
    """Refuse an ``encodings`` entry whose encoder is no built-in alias, no local model folder and no
    hub id (or a hub id not in the cache while HF_HUB_OFFLINE=1), naming the entry."""
    from ehi.core.config_values import encoder_dim

    for name, entry in encodings.items():
        encoder = (entry or {}).get("encoder", DEFAULT_ENCODER)
        if not isinstance(encoder, str) or not encoder:
            raise ConfigError(f"config encodings.{name}.encoder: {encoder!r} is not an encoder name")
        encoder_dim(encoder, where=f"encodings.{name}.encoder")
