"""The checksums a downloaded dataset's archives are published with, recorded at preparation.

A prepared dataset's manifest records the sha256 of the files it was read from, which catches a
cached archive that changed. A source whose published checksum changes (a new release named in the
source table, or ``EHI_SOURCE_OVERRIDES`` pointing at another version) while the old archive is
still cached changes no file, so the manifest also records the checksums the source published then
(``source_checksums``) and :func:`changed_checksums` compares them with today's at every parse: the
dataset is named as changed, and deleting its manifest prepares it again from the new version.
"""

from __future__ import annotations


def published_checksums(dataset_cfg: dict) -> dict[str, str]:
    """{filename: "md5:..." or "sha256:..."} of the files a downloaded dataset is fetched as (none for
    a local copy, the synthetic generator, or files published without a checksum)."""
    from ehi.data.download import overridden
    from ehi.data.sources import find_source

    source = None if dataset_cfg.get("path") else find_source(str(dataset_cfg.get("source")))
    if source is None or not source.remotes:
        return {}
    return {r.filename: f"md5:{r.md5}" if r.md5 else f"sha256:{r.sha256}"
            for r in overridden(source.name, source.remotes) if r.md5 or r.sha256}


def changed_checksums(manifest: dict) -> list[str]:
    """What differs between the checksums ``manifest`` recorded and those published now."""
    recorded = manifest.get("source_checksums")
    if not isinstance(recorded, dict) or not recorded:
        return []  # a local copy, or a manifest written before checksums were recorded
    now = published_checksums(manifest["config"])
    return [f"source archive {name}: published now as {now.get(name, 'no checksum')}, prepared from {was}"
            for name, was in sorted(recorded.items()) if now.get(name) != was]
