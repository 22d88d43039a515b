"""Fetching one published file into the dataset cache, verified, and unpacking it safely.

Downloads go through pooch (a maintained library for exactly this: streamed to a temporary file in
the cache, checked, then moved into place; retries; a tqdm progress bar), so nothing is
hand-written here but the checks pooch does not know. A file is checked against the md5 its source
publishes where there is one (BEIR, MS MARCO, TREC), else against the sha256 recorded at its first
download in ``<cache>/<source>/checksums.json`` (trust on first use, checked on every later
download). A file already in the cache is checked against the source's current checksum before
use (one read of it per preparation): when the published md5 changed (a new version, an
``EHI_SOURCE_OVERRIDES`` entry) or the file no longer matches its record, it is fetched again;
without any checksum it is used as it is. An archive is unpacked into a fresh folder and its
files moved in place of its previous version's (:func:`unpack`); one that does not unpack is removed
from the cache with its record, so the next run fetches it again. Only http(s) URLs are fetched. Every
failure is a one-line :class:`DownloadError` naming the URL or file and what to do.

``EHI_SOURCE_OVERRIDES`` names a JSON file ``{source: {filename: {"url": ..., "md5": ...}}}`` that
points files at a mirror (keeping the published checksum unless it gives another): for a local
mirror, and for the tests, which serve fixture archives from 127.0.0.1.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tarfile
import zipfile
import zlib
from dataclasses import replace
from pathlib import Path, PurePosixPath

from ehi.core.errors import UserError
from ehi.core.io import write_json
from ehi.data.sources import Remote
from ehi.data.validate import DataError

log = logging.getLogger("ehi.data")

TIMEOUT_S = 10  # per connect/read: fail fast offline, yet tolerate a slow mirror
RETRIES = 2  # pooch waits 1 s, then 2 s between attempts
OVERRIDES_ENV = "EHI_SOURCE_OVERRIDES"


class DownloadError(UserError):
    """A dataset file could not be fetched or verified; the message says what to do instead."""


def overridden(source_name: str, remotes: tuple[Remote, ...]) -> tuple[Remote, ...]:
    """``remotes`` with the URLs and checksums that ``EHI_SOURCE_OVERRIDES`` gives for this source."""
    path = os.environ.get(OVERRIDES_ENV)
    if not path:
        return remotes
    try:
        table = json.loads(Path(path).expanduser().read_text()).get(source_name, {})
    except (OSError, ValueError, AttributeError) as err:
        raise DownloadError(f"{OVERRIDES_ENV}={path}: not a readable JSON object ({err}); fix or unset it") from None
    unknown = sorted(set(table) - {r.filename for r in remotes})
    if unknown:
        raise DownloadError(f"{OVERRIDES_ENV}={path}: source {source_name!r} publishes no file {unknown}; "
                            f"its files: {[r.filename for r in remotes]}")
    keys = ("url", "md5", "sha256")
    return tuple(replace(r, **{k: v for k, v in table.get(r.filename, {}).items() if k in keys}) for r in remotes)


def _cached_matches(target: Path, known: str | None, what: str) -> bool:
    """Whether the cached ``target`` may be used: it matches ``known`` (``alg:hex``), or there is no
    checksum to compare it with. A mismatch is logged and the file removed (fetched again)."""
    if known is None:
        return True
    import pooch

    alg, want = known.split(":", 1)
    if pooch.file_hash(str(target), alg=alg) == want.lower():
        return True
    log.warning("%s: the cached %s does not match the source's current %s %s; downloading it again",
                what, target, alg, want)
    target.unlink()
    return False


def download(remote: Remote, target: Path, what: str, manifest: Path, hint: str) -> Path:
    """Fetch ``remote`` to ``target`` (once, and again when the cached copy no longer matches the
    source's checksum), verified; ``what`` names the dataset in messages and ``hint`` says how to
    use a local copy instead."""
    recorded = json.loads(manifest.read_text()) if manifest.exists() else {}
    pinned = remote.sha256 or recorded.get(remote.filename)
    known = f"md5:{remote.md5}" if remote.md5 else (f"sha256:{pinned}" if pinned else None)
    if target.exists() and _cached_matches(target, known, what):
        return target
    import pooch
    import requests

    if not remote.url.lower().startswith(("http://", "https://")):
        raise DownloadError(f"{what}: {remote.url}: only http(s) URLs are downloaded; for a file on this machine, "
                            f"put it at {target} (it is checked against the source's checksum there), or {hint}")
    log.info("%s: downloading %s to %s", what, remote.url, target)
    store = pooch.create(path=target.parent, base_url="", registry={target.name: known},
                         urls={target.name: remote.url}, retry_if_failed=RETRIES)
    downloader = pooch.HTTPDownloader(progressbar=True, timeout=TIMEOUT_S,
                                      headers={"User-Agent": "ehi-data", **dict(remote.headers)})
    try:
        store.fetch(target.name, downloader=downloader)
    except ValueError as err:  # pooch: the hash does not match
        again = f"delete {manifest} to accept a new version" if not remote.md5 and pinned else "try again later"
        raise DownloadError(f"{what}: {remote.filename} from {remote.url}: {' '.join(str(err).split())}; the download "
                            f"is corrupt or the file changed upstream ({again})") from None
    except (OSError, requests.RequestException) as err:
        raise DownloadError(f"{what}: cannot download {remote.url} ({type(err).__name__}: "
                            f"{' '.join(str(err).split())[:300]}). No network? Then {hint}") from None
    check_payload(remote, target, what)
    if remote.filename not in recorded or remote.md5:  # a verified new version replaces the old record
        write_json({**recorded, remote.filename: pooch.file_hash(str(target), alg="sha256")}, manifest)
    return target


def check_payload(remote: Remote, file: Path, what: str) -> None:
    """Refuse an HTML page served in place of the file (a quota or consent page of a file host):
    with no published checksum it would otherwise be recorded as the first-use checksum."""
    with open(file, "rb") as fh:
        head = fh.read(512).lstrip().lower()
    html = head.startswith((b"<!doctype html", b"<html"))
    if html or (remote.extract and not (zipfile.is_zipfile(file) or tarfile.is_tarfile(file))):
        file.unlink()
        raise DownloadError(
            f"{what}: {remote.url} served {'an HTML page' if html else 'no archive'} instead of "
            f"{remote.filename}; download it by hand and put it at {file}"
        )


def check_member(name: str, archive: Path) -> None:
    """Refuse archive members that would land outside the extraction directory."""
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or (path.parts and ":" in path.parts[0]):
        raise DataError(f"{archive}: unsafe member {name!r} (absolute path or '..'); refusing to extract")


def extract_cached(archive: Path, dest: Path, manifest: Path) -> None:
    """:func:`safe_extract` of a cached download; an archive that does not unpack (a broken mirror's
    file, a truncated copy) is removed from the cache with its recorded checksum, so the next run
    fetches it again instead of failing on the same file."""
    try:
        if not (zipfile.is_zipfile(archive) or tarfile.is_tarfile(archive)):
            raise tarfile.ReadError("neither a zip nor a tar archive")
        safe_extract(archive, dest)  # an unsafe member name is refused as it is: the file is what was published
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error) as err:
        archive.unlink(missing_ok=True)
        recorded = json.loads(manifest.read_text()) if manifest.exists() else {}
        if recorded.pop(archive.name, None) is not None:
            write_json(recorded, manifest)
        raise DownloadError(f"{archive}: does not unpack ({' '.join(str(err).split())[:200]}); removed from the "
                            "cache with its recorded checksum: run again to download it again") from None


def unpack(archive: Path, root: Path, manifest: Path) -> None:
    """Unpack ``archive`` into ``root`` in place of what its previous version unpacked there.

    The archive is extracted into a fresh folder beside it, then every file its previous version
    put in ``root`` (listed in a hidden record beside it) is removed and the new files are moved
    in: a new version of a dataset never inherits a file the old one had and it lacks (a dev split
    that was dropped), and an archive that does not unpack leaves ``root`` as it was. A version is
    told by the archive's size and modification time (a new download is a new file)."""
    record_path = archive.with_name(f".{archive.name}.unpacked.json")
    record = json.loads(record_path.read_text()) if record_path.is_file() else {}
    stamp = [archive.stat().st_size, archive.stat().st_mtime_ns]
    if record.get("archive") == stamp and all((root / f).is_file() for f in record.get("files", [])):
        return
    fresh = archive.with_name(f".{archive.name}.unpacking")
    shutil.rmtree(fresh, ignore_errors=True)
    try:
        extract_cached(archive, fresh, manifest)
        files = sorted(p.relative_to(fresh).as_posix() for p in fresh.rglob("*") if p.is_file())
        # first the union, so that a kill while files move leaves every one of them listed for the next try
        write_json({"archive": None, "files": sorted({*record.get("files", []), *files})}, record_path)
        for name in record.get("files", []):
            (root / name).unlink(missing_ok=True)
        for name in files:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            os.replace(fresh / name, root / name)
        write_json({"archive": stamp, "files": files}, record_path)
    finally:
        shutil.rmtree(fresh, ignore_errors=True)


def safe_extract(archive: Path, dest: Path) -> None:
    """Extract a zip or tar archive into ``dest`` after checking every member name."""
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            for name in zf.namelist():
                check_member(name, archive)
            zf.extractall(dest)
    elif tarfile.is_tarfile(archive):
        with tarfile.open(archive) as tf:
            for member in tf.getmembers():
                check_member(member.name, archive)
            # The "data" filter also refuses links out of dest and device files.
            tf.extractall(dest, filter="data")
    else:
        raise DataError(f"{archive}: neither a zip nor a tar archive")


def find_root(root: Path, marker: str) -> Path:
    """The directory holding ``marker``: ``root`` itself or the one folder an archive unpacked to."""
    if (root / marker).is_file():
        return root
    hits = [p.parent for pattern in (f"*/{marker}", f"*/*/{marker}") for p in sorted(root.glob(pattern))]
    hits = [p for p in hits if "downloads" not in p.relative_to(root).parts]
    if len(hits) != 1:
        raise DataError(f"{root}: expected one directory with {marker}, found {len(hits) or 'none'}")
    return hits[0]
