"""The files of an exported EHI index and what ties them together: FILE (FAISS), FILE.json (how to
use it) and, for height >= 2, FILE.router.safetensors (EHI's routing in numpy).

Each file is written whole or not at all, the sidecar last. It records sha256 checksums of FILE,
of the router file and of the id map, and one of its own other fields (height, format version,
dimensions): a FAISS file of another export, a reordered id map, another export's sidecar or an
edited height would otherwise load and return wrong ids without an error. :func:`load_export`
checks every file against the others and names the file at fault.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import faiss
from safetensors import SafetensorError

from ehi.core.errors import SearchIndexError
from ehi.core.io import atomic_path, file_sha256

FORMAT = "ehi-faiss-export"
# this layout: FILE takes queries of the embeddings' own dimension (a pre-transform appends the routing
# coordinate) and the sidecar carries checksums; an older export is refused, not read another way
FORMAT_VERSION = 3
REQUIRED = ("format", "format_version", "dim", "faiss_dim", "n_docs", "n_leaves", "height", "branching",
            "doc_ids", "rerank", "checksums")


class ExportError(SearchIndexError):
    """An export that is missing, malformed, or whose files do not belong together."""


def meta_path(path: Path) -> Path:
    return path.with_name(path.name + ".json")


def router_path(path: Path) -> Path:
    return path.with_name(path.name + ".router.safetensors")


def _digest(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def sidecar_digest(meta: dict) -> str:
    """sha256 of every sidecar field but the checksums themselves (id map included)."""
    return _digest({k: v for k, v in meta.items() if k != "checksums"})


def write_export(exported, path: str | os.PathLike) -> Path:
    """FILE, (height >= 2) FILE.router.safetensors, then FILE.json with their checksums; a height-1
    export removes the router file a previous export left at ``path``, once its sidecar is written."""
    path = Path(path)
    if path.is_dir():
        raise ExportError(f"{path}: is a directory; name the FAISS file to write")
    meta = {**exported.meta, "faiss_file": path.name}
    with atomic_path(path) as tmp:
        try:
            faiss.write_index(exported.index, str(tmp))
        except RuntimeError as err:
            raise ExportError(f"{path}: FAISS could not write the file: {str(err).splitlines()[0]}") from None
        checksums = {"faiss_file": file_sha256(tmp), "doc_ids": _digest(meta["doc_ids"])}
    if exported.router is not None:
        with atomic_path(router_path(path)) as tmp:
            exported.router.save(tmp)
            checksums["router_file"] = file_sha256(tmp)
        meta["router_file"] = router_path(path).name
    meta["checksums"] = {**checksums, "sidecar": sidecar_digest(meta)}
    with atomic_path(meta_path(path)) as tmp:
        tmp.write_text(json.dumps(meta, indent=1) + "\n")
    if exported.router is None:  # a previous export's router (height >= 2) would lie beside one it is not
        router_path(path).unlink(missing_ok=True)
    return path


def read_meta(path: Path) -> dict:
    jpath = meta_path(path)
    if not jpath.exists():
        raise ExportError(f"{jpath}: missing (an export is FILE plus FILE.json with the id map and augmentation)")
    try:
        meta = json.loads(jpath.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ExportError(f"{jpath}: not valid JSON: {err}") from None
    missing = [k for k in REQUIRED if not isinstance(meta, dict) or k not in meta]
    if isinstance(meta, dict) and "format_version" in meta and meta["format_version"] != FORMAT_VERSION:
        missing = []  # an export of another version: say that rather than which fields it lacks
    if missing:
        raise ExportError(f"{jpath}: missing {', '.join(missing)}" + (" (the doc-id map)" if "doc_ids" in missing else ""))
    if meta["format"] != FORMAT or meta["format_version"] != FORMAT_VERSION:
        raise ExportError(f"{jpath}: format {meta.get('format')!r} v{meta['format_version']}, expected {FORMAT!r} "
                          f"v{FORMAT_VERSION} (an index searched with the embeddings' own dimension); export the "
                          "index again with ehi export-faiss")
    if not isinstance(meta["checksums"], dict) or not isinstance(meta["doc_ids"], list):
        raise ExportError(f"{jpath}: checksums must be an object and doc_ids a list")
    return meta


def verify_checksums(path: Path, meta: dict) -> None:
    """Each file and the id map as the export wrote them, and the sidecar unedited."""
    jpath, sums = meta_path(path), meta["checksums"]
    if sums.get("sidecar") != sidecar_digest(meta):
        raise ExportError(f"{jpath}: changed after export (its checksum of the id map, height and settings "
                          "differs); export the index again")
    if sums.get("doc_ids") != _digest(meta["doc_ids"]):
        raise ExportError(f"{jpath}: the id map differs from the one exported (reordered or edited)")
    if sums.get("faiss_file") != file_sha256(path):
        raise ExportError(f"{path}: not the FAISS file {jpath.name} was written with (another export's, or "
                          "changed since)")
    if meta["height"] > 1 and sums.get("router_file") != file_sha256(router_path(path)):
        raise ExportError(f"{router_path(path)}: not the router {jpath.name} was written with")


def read_router(path: Path, meta: dict, threads: int | None):
    from ehi.search.route import NumpyRouter

    rpath = router_path(path)
    if not rpath.exists():
        raise ExportError(f"{rpath}: missing (height {meta['height']} is routed by EHI's router, not by FAISS)")
    try:
        router = NumpyRouter.load(rpath, threads=threads)
    except (ValueError, OSError, SafetensorError) as err:
        raise ExportError(f"{rpath}: not a readable router file: {' '.join(str(err).split())}") from None
    if router.dim != meta["dim"] or router.n_leaves != meta["n_leaves"]:
        raise ExportError(f"{rpath}: a tree of dim {router.dim} with {router.n_leaves} leaves, but "
                          f"{meta_path(path).name} says dim {meta['dim']} with {meta['n_leaves']} leaves")
    return router
