"""Dataset sources behind one interface: ``SOURCES[name].fetch(cache_dir)`` / ``.load(cache_dir)``.

A :class:`Source` knows where its files are published, how to check them and which parser turns a
local directory into a :class:`~ehi.data.dataset.Dataset`. Parsers take a local directory, so a copy
made by hand (or on another machine) loads through ``dataset.path`` with no download. Downloads
stream to a temporary file that is renamed into place only once its checksum matches: the md5 the
source publishes where there is one (BEIR, MS MARCO, TREC), else a sha256 recorded at first
download in ``<cache_dir>/<name>/checksums.json`` and checked on every later download. Archives are
extracted only if no member is absolute or climbs out with ``..``.

Without network a download fails within :data:`TIMEOUT_S` seconds, naming the dataset and the config
keys that point at a local copy instead.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import logging
import os
import tarfile
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Callable


from ehi.data.beir import load_beir
from ehi.data.formats import load_msmarco, load_nq320k, load_xmc, read_msmarco_triples  # noqa: F401  (re-exported)
from ehi.data.dataset import Dataset
from ehi.data.validate import DataError
from ehi.core.io import atomic_path, write_json
from ehi.core.plugins import load_plugins

log = logging.getLogger("ehi.data")

TIMEOUT_S = 10  # per connect/read: fail fast offline, yet tolerate a slow mirror
CHUNK = 1 << 20


class DownloadError(RuntimeError):
    """A dataset could not be fetched; the message says how to use a local copy instead."""


@dataclass(frozen=True)
class Remote:
    """One published file. ``md5``/``sha256``: published or pinned checksums (else trust on first use)."""

    url: str
    filename: str
    md5: str | None = None
    sha256: str | None = None
    extract: bool = False
    optional: bool = False  # fetched only on request (e.g. MS MARCO's 2 GB training triples)
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Source:
    name: str
    parser: Callable[..., Dataset]  # parser(local_dir, name=...) -> Dataset
    layout: str  # what a local copy looks like, for messages
    marker: str  # a file at the dataset's root, to find it inside an extracted archive
    remotes: tuple[Remote, ...] = ()
    note: str = ""  # why there is nothing to download, for sources without remotes

    def hint(self) -> str:
        return (
            f"to use a local copy, set dataset.source: {self.name} and dataset.path: /path/to/{self.name} "
            f"({self.layout}) in your config"
        )

    def load_local(self, path: str | os.PathLike, name: str | None = None) -> Dataset:
        return self.parser(Path(path).expanduser(), name=name or (self.name if self.remotes else None))

    def fetch(self, cache_dir: str | os.PathLike, optional: bool = False) -> Path:
        """Download (once) and extract this source under ``cache_dir/<name>``; return its root."""
        if not self.remotes:
            raise DownloadError(f"{self.name}: {self.note} {self.hint()}")
        root = Path(cache_dir).expanduser() / self.name
        for remote in self.remotes:
            if remote.optional and not optional:
                continue
            target = root / "downloads" / remote.filename if remote.extract else root / remote.filename
            download(remote, target, self, root / "checksums.json")
            done = target.with_name(target.name + ".extracted")
            if remote.extract and not done.exists():
                safe_extract(target, root)
                done.touch()
        return find_root(root, self.marker)

    def load(self, cache_dir: str | os.PathLike) -> Dataset:
        return self.load_local(self.fetch(cache_dir))


def download(remote: Remote, target: Path, source: Source, manifest: Path) -> Path:
    """Stream ``remote`` to ``target`` atomically, verifying its checksum before the rename."""
    if target.exists():
        return target
    log.info("%s: downloading %s", source.name, remote.url)
    request = urllib.request.Request(remote.url, headers={"User-Agent": "ehi-data", **dict(remote.headers)})
    md5, sha = hashlib.md5(), hashlib.sha256()
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response, atomic_path(target) as tmp:
            with open(tmp, "wb") as out:
                for chunk in iter(lambda: response.read(CHUNK), b""):
                    md5.update(chunk)
                    sha.update(chunk)
                    out.write(chunk)
            check_payload(remote, response, tmp, source)
            verify(remote, md5.hexdigest(), sha.hexdigest(), manifest, source)
    except (OSError, http.client.HTTPException, ValueError) as err:
        reason = getattr(err, "reason", None) or err
        raise DownloadError(
            f"{source.name}: cannot download {remote.url} ({reason}). No network? Then {source.hint()}"
        ) from err
    return target


def check_payload(remote: Remote, response, tmp: Path, source: Source) -> None:
    """Refuse an HTML page served in place of the file (a quota or consent page of a file host):
    with no published checksum it would otherwise be recorded as the first-use checksum."""
    headers = getattr(response, "headers", None)
    html = headers is not None and headers.get_content_type() == "text/html"
    if html or (remote.extract and not (zipfile.is_zipfile(tmp) or tarfile.is_tarfile(tmp))):
        raise DownloadError(
            f"{source.name}: {remote.url} served {'an HTML page' if html else 'no archive'} instead of "
            f"{remote.filename}; download it by hand and {source.hint()}"
        )


def verify(remote: Remote, md5: str, sha256: str, manifest: Path, source: Source) -> None:
    """Check a download against the published or recorded checksum; record a first sha256."""
    recorded = json.loads(manifest.read_text()) if manifest.exists() else {}
    expected = [("md5", remote.md5, md5), ("sha256", remote.sha256 or recorded.get(remote.filename), sha256)]
    for kind, want, got in expected:
        if want and want != got:
            raise DownloadError(
                f"{source.name}: {remote.filename} has {kind} {got}, expected {want}; "
                f"the download is corrupt or the file changed upstream (delete {manifest} to accept a new version)"
            )
    if remote.filename not in recorded:
        write_json({**recorded, remote.filename: sha256}, manifest)


def check_member(name: str, archive: Path) -> None:
    """Refuse archive members that would land outside the extraction directory."""
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or (path.parts and ":" in path.parts[0]):
        raise DataError(f"{archive}: unsafe member {name!r} (absolute path or '..'); refusing to extract")


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


BEIR_URL = "https://public.ukp.informatik.tu-darmstadt.de/thakur/BEIR/datasets/{}.zip"
BEIR_LAYOUT = "a BEIR directory: corpus.jsonl, queries.jsonl, qrels/{train,dev,test}.tsv"
MSMARCO_URL = "https://msmarco.z22.web.core.windows.net/msmarcoranking/"
TREC_DL_URL = "https://trec.nist.gov/data/deep/"
MSMARCO_HEADERS = (("X-Ms-Version", "2019-12-12"),)  # the Azure blob host asks for an API version


def _beir(name: str, md5: str) -> Source:
    # md5s as published by BEIR (and pinned by ir_datasets' downloads.json).
    remote = Remote(BEIR_URL.format(name), f"{name}.zip", md5, extract=True)
    return Source(name, load_beir, BEIR_LAYOUT, "corpus.jsonl", (remote,))


def _msmarco(filename: str, md5: str, **kw) -> Remote:
    return Remote(MSMARCO_URL + filename, filename, md5, headers=MSMARCO_HEADERS, **kw)


NQ320K_URL = "https://huggingface.co/datasets/dqmis/NQ320K-NCI/resolve/main/data/"
# The raw-text archive of the Extreme Classification Repository: LF-AmazonTitles-131K shares its
# points and labels with LF-Amazon-131K and uses their titles only.
XMC_URL = "https://drive.usercontent.google.com/download?id=1WuquxCAg8D4lKr-eZXPv4nNw2S2lm7_E&export=download&confirm=t"

SOURCES: dict[str, Source] = {
    s.name: s
    for s in [
        Source("beir", load_beir, BEIR_LAYOUT, "corpus.jsonl", note="the generic BEIR source downloads nothing;"),
        _beir("scifact", "5f7d1de60b170fc8027bb7898e2efca1"),
        _beir("fiqa", "17918ed23cd04fb15047f73e6c3bd9d9"),
        _beir("nfcorpus", "a89dba18a62ef92f7d323ec890a0d38d"),
        Source(
            "msmarco",
            load_msmarco,
            "collection.tsv, queries.{train,dev.small}.tsv, qrels.{train,dev.small}.tsv, "
            "msmarco-test2019-queries.tsv[.gz], 2019qrels-pass.txt",
            "collection.tsv",
            (
                _msmarco("collectionandqueries.tar.gz", "31644046b18952c1386cd4564ba2ae69", extract=True),
                _msmarco("queries.tar.gz", "c177b2795d5f2dcc524cf00fcd973be1", extract=True),
                _msmarco("qrels.train.tsv", "733fb9fe12d93e497f7289409316eccf"),
                _msmarco("msmarco-test2019-queries.tsv.gz", "eda71eccbe4d251af83150abe065368c"),
                Remote(TREC_DL_URL + "2019qrels-pass.txt", "2019qrels-pass.txt", "2f4be390198da108f6845c822e5ada14"),
                _msmarco("qidpidtriples.train.full.2.tsv.gz", "219083e80a0a751c08b968c2f31a4e0b", optional=True),
            ),
        ),
        Source(
            "nq320k",
            load_nq320k,
            "NCI-style JSON lines: corpus.jsonl, train.jsonl, valid.jsonl",
            "train.jsonl",
            tuple(Remote(NQ320K_URL + f, f) for f in ("corpus.jsonl", "train.jsonl", "valid.jsonl")),
        ),
        Source(
            "lf-amazontitles-131k",
            load_xmc,
            "the Extreme Classification Repository layout: trn.json.gz, tst.json.gz, lbl.json.gz",
            "lbl.json.gz",
            (Remote(XMC_URL, "LF-Amazon-131K.raw.zip", extract=True),),
        ),
    ]
}


def register_source(source: Source) -> Source:
    """Add a dataset source (a plugin's, :mod:`ehi.core.plugins`): a parser of a local directory
    and, optionally, the remotes to fetch it from. A name already taken is an error."""
    if source.name in SOURCES or source.name == "synthetic":
        raise ValueError(f"dataset source {source.name!r} is already registered")
    SOURCES[source.name] = source
    return source


def load_dataset(
    source: str,
    path: str | os.PathLike | None = None,
    cache_dir: str | os.PathLike | None = None,
    name: str | None = None,
) -> Dataset:
    """The one entry point a workflow script calls: a local copy when ``path`` is set, else a download."""
    load_plugins()
    if source not in SOURCES:
        raise KeyError(f"unknown dataset.source {source!r}; known sources: {sorted(SOURCES)}")
    if path is not None:
        return SOURCES[source].load_local(path, name=name)
    if cache_dir is None:
        raise ValueError(f"{source}: give dataset.path (a local copy) or a cache directory to download into")
    return SOURCES[source].load_local(SOURCES[source].fetch(cache_dir), name=name)
