"""Corpus embeddings at scale: float16 shards on disk with a manifest, resumable shard by shard.

An 8.8M-passage corpus at 768-d is 27 GB in float32; one ``.npy`` written at the end of one long
job is lost whole when the job dies, and every reader must hold it in RAM. Here the corpus is cut
into shards of S consecutive rows, each encoded and written on its own::

    out_dir/
      manifest.json          spec (encoder, weights fingerprint, max_length, dim, dtype, shard size,
                             rows) + one entry per shard: file, start, rows, sha256, texts_sha256
      shard-00000.npy        (S, d) float16, rows 0..S-1 of the corpus
      shard-00000.json       the shard's entry, written after the shard: "this shard is finished"
      ...

Resuming: a shard whose ``.json`` exists, names the same texts and finds its file with the right
shape is skipped; any other shard is (re-)encoded. A shard's array is written to a temporary file
and renamed into place, its entry after it, so a killed job leaves finished shards and temporary
files (removed on the next run), never a half-written shard under a final name. A directory of
another encoder or spec is refused rather than mixed. Under torchrun, rank r encodes shards
r, r+W, r+2W, ... and rank 0 writes the manifest when all are done.

Reading: :class:`EmbeddingShards` gives each shard as a read-only memory map (nothing is loaded
until touched) and float32 blocks for the libraries. FAISS indexes are trained on a seeded sample
and filled shard by shard (:func:`build_searcher_from_shards`, :mod:`ehi.search.faiss_shards`), so the input never sits in RAM as
one float32 array (the index itself still holds its vectors: IVF-Flat and HNSW store them).
ScaNN's builder takes the whole database as one array (it partitions, and for AH quantises,
everything in one call; its ``upsert`` would route later points with a partitioner trained on the
first ones only), so ScaNN is built from :meth:`EmbeddingShards.to_array`: N x d float32 in RAM.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np
import torch

from ehi.core.io import atomic_path, file_sha256, write_json
from ehi.search.registry import ann_kind, build_searcher, kinds
from ehi.train import distributed

log = logging.getLogger(__name__)

FORMAT = 1
DTYPE = "float16"
MANIFEST = "manifest.json"


def shard_name(i: int) -> str:
    return f"shard-{i:05d}"


def texts_sha256(texts: Sequence[str]) -> str:
    h = hashlib.sha256()
    for t in texts:
        h.update(t.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()


def weights_fingerprint(model: torch.nn.Module) -> str:
    """sha256 over the state dict: the same path may hold another (retrained) encoder."""
    h = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        h.update(name.encode())
        h.update(tensor.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def _shard_done(out: Path, i: int, texts_hash: str, rows: int, dim: int) -> bool:
    entry_path = out / f"{shard_name(i)}.json"
    if not entry_path.exists():
        return False
    entry = json.loads(entry_path.read_text())
    if entry["texts_sha256"] != texts_hash or entry["rows"] != rows:
        return False  # the corpus changed under this shard: encode it again
    try:
        arr = np.load(out / entry["file"], mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError):
        return False
    return arr.shape == (rows, dim) and arr.dtype == np.dtype(DTYPE)


def encode_shards(texts: Sequence[str], encoder, out_dir: str | os.PathLike, shard_size: int = 100_000,
                  batch_size: int = 128, stop_after: int | None = None, progress: bool = False) -> Path | None:
    """Encode ``texts`` with ``encoder`` (ehi.model.encoder.Encoder) into float16 shards of ``shard_size``
    rows under ``out_dir`` (layout in the module doc), skipping finished shards; returns the
    manifest's path, or None when ``stop_after`` shards were encoded and some remain (for tests
    and time-sliced jobs: a later call continues)."""
    if shard_size < 1:
        raise ValueError(f"shard_size must be >= 1, got {shard_size}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ctx = distributed.context()
    n_shards = max(1, -(-len(texts) // shard_size))
    spec = {"format": FORMAT, "encoder": str(getattr(encoder, "name", type(encoder).__name__)),
            "weights_sha256": weights_fingerprint(encoder), "max_length": int(encoder.max_length),
            "dim": int(encoder.dim), "dtype": DTYPE, "shard_size": int(shard_size), "n_rows": len(texts)}
    _check_spec(out, spec, ctx)
    encoded = 0
    for i in range(ctx.rank, n_shards, ctx.world):
        start, stop = i * shard_size, min(len(texts), (i + 1) * shard_size)
        chunk = list(texts[start:stop])
        texts_hash = texts_sha256(chunk)
        if _shard_done(out, i, texts_hash, stop - start, spec["dim"]):
            continue
        if stop_after is not None and encoded >= stop_after:
            return None
        emb = encoder.encode(chunk, batch_size, progress=f"shard {i + 1}/{n_shards}" if progress else False)
        name = shard_name(i)
        with atomic_path(out / f"{name}.npy") as tmp:
            with open(tmp, "wb") as fh:
                np.save(fh, emb.astype(DTYPE))
        entry = {"file": f"{name}.npy", "start": start, "rows": stop - start,
                 "sha256": file_sha256(out / f"{name}.npy"), "texts_sha256": texts_hash}
        write_json(entry, out / f"{name}.json")
        encoded += 1
        log.info("shard %d/%d: rows %d-%d", i + 1, n_shards, start, stop - 1)
    ctx.barrier()
    if ctx.is_main:
        entries = [json.loads((out / f"{shard_name(i)}.json").read_text()) for i in range(n_shards)]
        write_json({**spec, "shards": entries}, out / MANIFEST)
    ctx.barrier()
    return out / MANIFEST


def _check_spec(out: Path, spec: dict, ctx) -> None:
    """Refuse a directory holding another encoder's (or another layout's) shards."""
    path = out / "spec.json"
    if path.exists():
        saved = json.loads(path.read_text())
        diff = {k: (saved.get(k), v) for k, v in spec.items() if saved.get(k) != v and k != "n_rows"}
        if diff:
            raise ValueError(f"{out} holds shards written with another spec (saved, now): {diff}; "
                             "use a new directory")
    ctx.barrier()  # every rank has read the old spec before rank 0 replaces it
    if ctx.is_main:
        write_json(spec, path)
        for stale in out.glob(".shard-*.tmp"):  # a killed job's temporary files (ehi.core.io.atomic_path)
            stale.unlink(missing_ok=True)
    ctx.barrier()


class EmbeddingShards:
    """A finished shard directory: rows in corpus order, each shard a read-only memory map."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        manifest = self.path / MANIFEST
        if not manifest.exists():
            raise FileNotFoundError(f"{manifest} is missing: the encoding is unfinished (rerun to resume)")
        self.manifest = json.loads(manifest.read_text())
        self.entries = self.manifest["shards"]

    @property
    def n_rows(self) -> int:
        return int(self.manifest["n_rows"])

    @property
    def dim(self) -> int:
        return int(self.manifest["dim"])

    def __len__(self) -> int:
        return len(self.entries)

    def shard(self, i: int) -> np.ndarray:
        """Shard i as a read-only float16 memory map (rows, dim)."""
        return np.load(self.path / self.entries[i]["file"], mmap_mode="r", allow_pickle=False)

    def blocks(self, dtype=np.float32) -> Iterator[tuple[int, np.ndarray]]:
        """(first row, shard as a ``dtype`` array) shard by shard: one shard in RAM at a time."""
        for i, entry in enumerate(self.entries):
            yield entry["start"], np.ascontiguousarray(self.shard(i), dtype=dtype)

    def take(self, rows: np.ndarray, dtype=np.float32) -> np.ndarray:
        """The given corpus rows (any order) -> (len(rows), dim), reading only their shards."""
        rows = np.asarray(rows, dtype=np.int64)
        out = np.empty((len(rows), self.dim), dtype=dtype)
        size = int(self.manifest["shard_size"])
        for i in np.unique(rows // size):
            sel = np.flatnonzero(rows // size == i)
            out[sel] = self.shard(int(i))[rows[sel] - i * size]
        return out

    def to_array(self, dtype=np.float32) -> np.ndarray:
        """Everything in one in-memory array (N, dim): what ScaNN's builder needs."""
        out = np.empty((self.n_rows, self.dim), dtype=dtype)
        for start, block in self.blocks(dtype):
            out[start : start + len(block)] = block
        return out

    def verify(self) -> None:
        """Recompute every shard's sha256 against the manifest."""
        for entry in self.entries:
            if file_sha256(self.path / entry["file"]) != entry["sha256"]:
                raise ValueError(f"{self.path / entry['file']}: sha256 differs from the manifest")


def build_searcher_from_shards(kind: str, shards: EmbeddingShards, train_size: int | None = None,
                               seed: int = 1234, **params):
    """An ANNS searcher (ehi.search.registry) over the shards, built the kind's own way.

    Kinds with a ``from_shards`` builder (the FAISS ones, :mod:`ehi.search.faiss_shards`) fill
    their index shard by shard, without one float32 copy of the corpus in RAM; ``train_size`` and
    ``seed`` are the rows IVF's quantizer trains on and the seed that draws them. The others
    (scann / scann-ah) are built from the full array (see the module doc).
    """
    builder = ann_kind(kind).shard_builder()
    if builder is None:
        return build_searcher(kind, shards.to_array(), **params)
    return builder(shards, train_size=train_size, seed=seed, **params)


def main(argv: list[str] | None = None) -> None:
    """``python -m ehi.search.shards encode|build ...``; ``encode`` also runs under torchrun (one GPU a rank)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m ehi.search.shards", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    enc = sub.add_parser("encode", help="encode a dataset's corpus into float16 shards (resumable)")
    enc.add_argument("--encoder", required=True, help="encoder name or folder (ehi.model.encoder.load_encoder)")
    enc.add_argument("--data-dir", required=True, help="folder holding corpus.parquet")
    enc.add_argument("--out", required=True, help="shard directory")
    enc.add_argument("--shard-size", type=int, default=100_000)
    enc.add_argument("--batch-size", type=int, default=256)
    enc.add_argument("--max-length", type=int, default=128)
    enc.add_argument("--device", default="auto")
    build = sub.add_parser("build", help="build an ANNS index (ehi.search.registry kind) from a shard directory")
    build.add_argument("--shards", required=True)
    build.add_argument("--kind", required=True, choices=kinds())
    build.add_argument("--out", required=True, help="index directory (Searcher.save)")
    build.add_argument("--train-size", type=int, default=None, help="faiss-ivf: rows the quantizer trains on")
    build.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="builder keyword (int)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if args.command == "encode":
        from ehi.data.dataset import Dataset, doc_texts
        from ehi.model.encoder import load_encoder, pick_device

        ctx = distributed.init_from_env(args.device)
        device = distributed.rank_device(pick_device(args.device), ctx)
        encoder = load_encoder(args.encoder, max_length=args.max_length, device=str(device))
        texts = doc_texts(Dataset.read(args.data_dir).corpus)
        encode_shards(texts, encoder, args.out, args.shard_size, args.batch_size, progress=ctx.is_main)
    else:
        params = {k: int(v) for k, v in (p.split("=", 1) for p in args.param)}
        build_searcher_from_shards(args.kind, EmbeddingShards(args.shards), args.train_size, **params).save(args.out)


if __name__ == "__main__":
    main()
