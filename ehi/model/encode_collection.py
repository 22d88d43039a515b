"""A text collection encoded once into an embeddings folder (``dataset.source: embeddings``).

A collection at 10^5 takes most of an hour to encode on two cores, and every study on it (frozen
trees, towers trained as DE or EHI, the benchmark) reads the same vectors. So the pipeline encodes
it once, as a job of the DAG (rule ``encode_collection``), into the layout of
:mod:`ehi.data.embeddings`, and the studies name that folder as their dataset.

The work is resumable: rows are written in chunks into memory-mapped arrays in ``<out>.partial/``
with a progress file, a killed job restarts at its last chunk, and the folder is renamed into place
only when every row is written, so ``<out>`` is either absent or whole. ``embeddings.json`` records
the encoder, its weights' digest, ``max_length`` and the texts' digest: a folder made from other
texts or weights is not taken for this one, and a folder that records this very encoding is kept as
it is (a rerun Snakemake asks for after a failed job costs seconds). The old folder is swapped out
only once the new one is whole (:func:`ehi.core.io.replace_dir`).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

from ehi.core.io import recover_aside, replace_dir
from ehi.data.dataset import Dataset, doc_texts
from ehi.data.embeddings import create_array, write_ids, write_manifest, write_qrels

log = logging.getLogger(__name__)
PRODUCER = "ehi.model.encode_collection"
CHUNK_ROWS = 4096  # rows between progress saves: a kill loses at most a minute of encoding on 2 cores
PROGRESS = "progress.json"


def _fill(encoder, texts: list[str], array: np.ndarray, done: int, batch_size: int, mark, label: str) -> None:
    """Encode ``texts[done:]`` into ``array`` chunk by chunk, calling ``mark(rows_done)`` after each."""
    with tqdm(total=len(texts), initial=done, desc=label, unit="row", mininterval=10) as bar:
        for start in range(done, len(texts), CHUNK_ROWS):
            stop = min(start + CHUNK_ROWS, len(texts))
            array[start:stop] = encoder.encode(texts[start:stop], batch_size=batch_size)
            array.flush()
            mark(stop)
            bar.update(stop - start)


def _encoded_already(out: Path, identity: dict) -> bool:
    """Whether ``out`` is whole and its ``embeddings.json`` records this very encoding."""
    from ehi.data.embeddings import MANIFEST

    try:
        recorded = json.loads((out / MANIFEST).read_text())
    except (OSError, ValueError):
        return False
    return isinstance(recorded, dict) and all(recorded.get(k) == v for k, v in identity.items())


def texts_digest(docs: list[str], queries: list[str]) -> str:
    from ehi.model.embed_cache import texts_digest as digest

    return digest(docs + ["\x00queries\x00"] + queries)


def encode_collection(
    dataset: Dataset, out: str | os.PathLike, encoder_name: str, max_length: int, batch_size: int = 128,
    source: str = "", device: str = "auto",
) -> Path:
    """Encode ``dataset``'s documents and queries with ``encoder_name`` into the folder ``out``."""
    from ehi.model.embed_cache import encoder_digest
    from ehi.model.encoder import load_encoder

    out = Path(out)
    recover_aside(out)
    work = out.with_name(out.name + ".partial")
    encoder = load_encoder(str(encoder_name), max_length=max_length, device=device)
    docs, queries = doc_texts(dataset.corpus), dataset.queries.text.astype(str).tolist()
    identity = {"producer": PRODUCER, "encoder": str(encoder_name), "encoder_digest": encoder_digest(encoder),
                "max_length": int(max_length), "texts_digest": texts_digest(docs, queries),
                "source": str(source), "dataset": dataset.name}
    if _encoded_already(out, identity):
        log.info("%s holds these texts encoded by these weights already; kept as it is", out)
        return out
    progress_file = work / PROGRESS
    if _encoded_already(work, identity) and not progress_file.exists():  # killed while it was swapped in
        replace_dir(work, out)
        return out
    state = json.loads(progress_file.read_text()) if progress_file.is_file() else None
    if state is None or state.get("identity") != identity:  # nothing to resume, or another job's rows
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        for kind, n in (("docs", len(docs)), ("queries", len(queries))):
            create_array(work / f"{kind}.npy", (n, encoder.dim)).flush()
        state = {"identity": identity, "docs": 0, "queries": 0, "seconds": 0.0}
    else:
        log.info("resuming %s: %d of %d documents, %d of %d queries", work, state["docs"], len(docs),
                 state["queries"], len(queries))

    def save(kind: str, rows: int, started: float) -> None:
        state[kind] = rows
        state["seconds"] += time.perf_counter() - started
        tmp = progress_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(state))
        os.replace(tmp, progress_file)

    for kind, texts in (("docs", docs), ("queries", queries)):
        array = np.load(work / f"{kind}.npy", mmap_mode="r+")
        clock = [time.perf_counter()]

        def mark(rows: int, kind=kind, clock=clock) -> None:
            save(kind, rows, clock[0])
            clock[0] = time.perf_counter()

        _fill(encoder, texts, array, state[kind], batch_size, mark, f"encode {dataset.name} {kind}")
        del array
    write_ids(work / "doc_ids.txt", dataset.corpus.doc_id)
    write_ids(work / "query_ids.txt", dataset.queries.query_id)
    write_qrels(work, dataset.qrels)
    write_manifest(work, {**identity, "dim": int(encoder.dim), "n_docs": len(docs), "n_queries": len(queries),
                          "encode_seconds": round(state["seconds"], 1), "device": str(encoder.device)})
    progress_file.unlink()
    replace_dir(work, out)  # an older encoding is replaced only now that the new one is whole
    log.info("encoded %s into %s in %.0f s", dataset.name, out, state["seconds"])
    return out



def main(argv: list[str] | None = None) -> None:
    from ehi.data.sources import SOURCES

    parser = argparse.ArgumentParser(prog="python -m ehi.model.encode_collection", description=__doc__.split("\n")[0],
                                     epilog="example: python -m ehi.model.encode_collection "
                                            "resources/sources/webster resources/vectors/webster_minilm")
    parser.add_argument("collection", help="a local collection folder (BEIR layout unless --source)")
    parser.add_argument("out", help="the embeddings folder to write")
    parser.add_argument("--source", default="beir", help="the collection's source (default beir)")
    parser.add_argument("--encoder", default="all-MiniLM-L6-v2")
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=128)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    dataset = SOURCES[args.source].load_local(args.collection, name=Path(args.collection).name)
    encode_collection(dataset, args.out, args.encoder, args.max_length, args.batch_size, source=args.collection)


if __name__ == "__main__":
    main()
