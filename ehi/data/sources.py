"""Dataset sources behind one interface: ``SOURCES[name].fetch(cache_dir)`` / ``.load_local(path)``.

A :class:`Source` knows where its files are published and which parser turns a local directory
into a :class:`~ehi.data.dataset.Dataset`. Parsers take a local directory, so a copy made by hand
(or on another machine) loads through ``dataset.path`` with no download. Fetching, checksums, the
cache and safe extraction are :mod:`ehi.data.download`'s; without a network a fetch fails within
seconds, naming the dataset and the config keys that point at a local copy instead.

A parser is named as a ``"module:function"`` string, imported on first use (as losses and ANNS
kinds are): the Snakefile checks ``dataset.source`` against :data:`SOURCES` while it parses, and
must not pay for the parsers, pandas or the downloader. Besides the table, ``synthetic`` (the
generator, no files) and ``ir_datasets:<id>`` (any collection the ir_datasets package knows) are
sources. A plugin adds one with :func:`register_source`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ehi.core.plugins import load_plugins, resolve

if TYPE_CHECKING:
    from ehi.data.dataset import Dataset

SYNTHETIC = "synthetic"
IR_DATASETS_PREFIX = "ir_datasets:"
NAME_PATTERN = r"[a-z0-9][a-z0-9_.-]*"  # the schema's pattern for dataset.source, beside ir_datasets:<id>
BEIR_PARSER = "ehi.data.beir:load_beir"


@dataclass(frozen=True)
class Remote:
    """One published file. ``md5``/``sha256``: published or pinned checksums (else trust on first use)."""

    url: str
    filename: str
    md5: str | None = None
    sha256: str | None = None
    extract: bool = False
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Source:
    name: str
    parser: str  # "module:function"(local_dir, name=...) -> Dataset
    layout: str  # what a local copy looks like, for messages
    marker: str  # a file at the dataset's root, to find it inside an extracted archive
    remotes: tuple[Remote, ...] = ()
    note: str = ""  # why there is nothing to download, for sources without remotes

    @property
    def beir_layout(self) -> bool:
        """A local copy holds qrels/<split>.tsv (which say the splits that have queries)."""
        return self.parser == BEIR_PARSER

    @property
    def downloads(self) -> bool:
        """False: the source reads ``dataset.path`` only."""
        return bool(self.remotes)

    def hint(self) -> str:
        return (
            f"to use a local copy, set dataset.source: {self.name} and dataset.path: /path/to/{self.name} "
            f"({self.layout}) in your config"
        )

    def load_local(self, path: str | os.PathLike, name: str | None = None) -> Dataset:
        return resolve(self.parser)(Path(path).expanduser(), name=name or (self.name if self.remotes else None))

    def fetch(self, cache_dir: str | os.PathLike) -> Path:
        """Download (once) and extract this source under ``cache_dir/<name>``; return its root."""
        from ehi.data.download import DownloadError, download, find_root, overridden, unpack

        if not self.remotes:
            raise DownloadError(f"{self.name}: {self.note} {self.hint()}")
        root = Path(cache_dir).expanduser() / self.name
        for remote in overridden(self.name, self.remotes):
            target = root / "downloads" / remote.filename if remote.extract else root / remote.filename
            download(remote, target, self.name, root / "checksums.json", self.hint())
            if remote.extract:  # in place of its previous version's files (once a version)
                unpack(target, root, root / "checksums.json")
        return find_root(root, self.marker)


BEIR_URL = "https://public.ukp.informatik.tu-darmstadt.de/thakur/BEIR/datasets/{}.zip"
EMBEDDINGS_LAYOUT = ("docs.npy|.safetensors, queries.npy|.safetensors (N x d and Q x d float32/float16), "
                     "doc_ids.txt, query_ids.txt, qrels/{train,dev,test}.tsv")
BEIR_LAYOUT = "a BEIR directory: corpus.jsonl, queries.jsonl, qrels/{train,dev,test}.tsv"
MSMARCO_URL = "https://msmarco.z22.web.core.windows.net/msmarcoranking/"
TREC_DL_URL = "https://trec.nist.gov/data/deep/"
MSMARCO_HEADERS = (("X-Ms-Version", "2019-12-12"),)  # the Azure blob host asks for an API version


def _beir(name: str, md5: str) -> Source:
    # md5s as published by BEIR (and pinned by ir_datasets' downloads.json).
    remote = Remote(BEIR_URL.format(name), f"{name}.zip", md5, extract=True)
    return Source(name, BEIR_PARSER, BEIR_LAYOUT, "corpus.jsonl", (remote,))


def _msmarco(filename: str, md5: str, **kw) -> Remote:
    return Remote(MSMARCO_URL + filename, filename, md5, headers=MSMARCO_HEADERS, **kw)


NQ320K_URL = "https://huggingface.co/datasets/dqmis/NQ320K-NCI/resolve/main/data/"
# The raw-text archive of the Extreme Classification Repository: LF-AmazonTitles-131K shares its
# points and labels with LF-Amazon-131K and uses their titles only.
XMC_URL = "https://drive.usercontent.google.com/download?id=1WuquxCAg8D4lKr-eZXPv4nNw2S2lm7_E&export=download&confirm=t"

SOURCES: dict[str, Source] = {
    s.name: s
    for s in [
        Source("beir", BEIR_PARSER, BEIR_LAYOUT, "corpus.jsonl", note="the generic BEIR source downloads nothing;"),
        Source("embeddings", "ehi.data.embeddings:load_embeddings", EMBEDDINGS_LAYOUT, "doc_ids.txt",
               note="precomputed embeddings are a local folder (docs/embeddings.md);"),
        _beir("scifact", "5f7d1de60b170fc8027bb7898e2efca1"),
        _beir("fiqa", "17918ed23cd04fb15047f73e6c3bd9d9"),
        _beir("nfcorpus", "a89dba18a62ef92f7d323ec890a0d38d"),
        Source(
            "msmarco",
            "ehi.data.formats:load_msmarco",
            "collection.tsv, queries.{train,dev.small}.tsv, qrels.{train,dev.small}.tsv, "
            "msmarco-test2019-queries.tsv[.gz], 2019qrels-pass.txt",
            "collection.tsv",
            (
                _msmarco("collectionandqueries.tar.gz", "31644046b18952c1386cd4564ba2ae69", extract=True),
                _msmarco("queries.tar.gz", "c177b2795d5f2dcc524cf00fcd973be1", extract=True),
                _msmarco("qrels.train.tsv", "733fb9fe12d93e497f7289409316eccf"),
                _msmarco("msmarco-test2019-queries.tsv.gz", "eda71eccbe4d251af83150abe065368c"),
                Remote(TREC_DL_URL + "2019qrels-pass.txt", "2019qrels-pass.txt", "2f4be390198da108f6845c822e5ada14"),
            ),
        ),
        Source(
            "nq320k",
            "ehi.data.formats:load_nq320k",
            "NCI-style JSON lines: corpus.jsonl, train.jsonl, valid.jsonl",
            "train.jsonl",
            tuple(Remote(NQ320K_URL + f, f) for f in ("corpus.jsonl", "train.jsonl", "valid.jsonl")),
        ),
        Source(
            "lf-amazontitles-131k",
            "ehi.data.formats:load_xmc",
            "the Extreme Classification Repository layout: trn.json.gz, tst.json.gz, lbl.json.gz",
            "lbl.json.gz",
            (Remote(XMC_URL, "LF-Amazon-131K.raw.zip", extract=True),),
        ),
    ]
}


def register_source(source: Source) -> Source:
    """Add a dataset source (a plugin's, :mod:`ehi.core.plugins`): a parser of a local directory
    (``"module:function"``) and, optionally, the remotes to fetch it from. A name already taken, or
    outside :data:`NAME_PATTERN` (the schema's form), is an error."""
    if source.name in SOURCES or source.name == SYNTHETIC:
        raise ValueError(f"dataset source {source.name!r} is already registered")
    if not re.fullmatch(NAME_PATTERN, source.name):
        raise ValueError(f"dataset source name {source.name!r}: use lower-case letters, digits, '.', '-' and '_'")
    if not isinstance(source.parser, str) or ":" not in source.parser:
        raise ValueError(f"dataset source {source.name!r}: parser must be a 'module:function' string, "
                         f"got {source.parser!r}")
    SOURCES[source.name] = source
    return source


def source_names() -> tuple[str, ...]:
    """Every source a config may name, plugins' included: synthetic, then the registered ones."""
    load_plugins()
    return (SYNTHETIC, *SOURCES)


def find_source(name: str) -> Source | None:
    """The registered source of that name, plugins' included; None for synthetic, ir_datasets and unknown names."""
    load_plugins()
    return SOURCES.get(name)


def load_dataset(
    source: str,
    path: str | os.PathLike | None = None,
    cache_dir: str | os.PathLike | None = None,
    name: str | None = None,
) -> Dataset:
    """The one entry point a workflow script calls: a local copy when ``path`` is set, else a download."""
    from ehi.data.download import DownloadError
    from ehi.data.irds import load_ir_datasets

    load_plugins()
    if source.startswith(IR_DATASETS_PREFIX):  # ir_datasets fetches and caches its own files
        if path is not None:
            raise DownloadError(f"dataset.path is set beside dataset.source {source!r}, which ir_datasets reads from "
                                "its own cache (IR_DATASETS_HOME); drop dataset.path, or use the source of the copy's layout")
        return load_ir_datasets(source, name=name)
    if source not in SOURCES:
        raise KeyError(f"unknown dataset.source {source!r}; known sources: {sorted(SOURCES)}")
    if path is not None:
        return SOURCES[source].load_local(path, name=name)
    if cache_dir is None:
        raise ValueError(f"{source}: give dataset.path (a local copy) or a cache directory to download into")
    return SOURCES[source].load_local(SOURCES[source].fetch(cache_dir), name=name)
