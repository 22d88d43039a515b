"""The ``ehi`` command: search a saved index, or describe one.

    ehi search --index DIR --query "what causes fever" --beam 4 -k 10     # a readable table
    ehi search --index DIR --queries-file queries.txt > run.tsv            # one query per line
    cat queries.txt | ehi search --index DIR --queries-file -             # stdin
    ehi search --index DIR --queries-file queries.txt --out run.tsv        # written whole or not at all
    ehi search --index DIR --queries-file queries.tsv --format trec        # a TREC run (qid<TAB>text lines)
    ehi info --index DIR                                                  # tree, leaf balance, config
    ehi export-faiss --index DIR --out ehi.faiss [--pq 96]                # a faiss.read_index file
    ehi search --index DIR --query-vectors queries.npy                    # vectors encoded elsewhere
    ehi compare DIR                                                       # the pipeline on a vectors folder

Query files are read and searched in batches (``--batch-size``) and the results are printed as
each batch finishes, so a long file streams. Their output is TSV with a header:
``query_no  rank  doc_id  score  title``, query_no being the 1-based line number (blank lines are
skipped but keep their number). A query file is checked whole (UTF-8, at least one query) before
the first query is searched; with ``--out`` the results go to a temporary file renamed into place
at the end, so a failed run leaves no partial file. Bad input (a broken index, a bad argument or
query file) is one line on stderr and exit status 1; ``--verbose`` (or ``EHI_DEBUG=1``) shows its
traceback.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import sys
from pathlib import Path

import numpy as np
from typing import TYPE_CHECKING, Iterator, TextIO

from ehi.core.errors import SearchIndexError, exit_on_user_error
from ehi.core.kernels import pin_kernels
from ehi.serve.cli_parser import build_parser
from ehi.serve.queries import checked_queries, vector_queries
from ehi.search.query_args import capped_k, check_query_rows

if TYPE_CHECKING:
    from ehi.serve.api import SearchIndex
# torch, transformers and pandas are imported where a command needs them: --help and --version
# answer without them

def _batches(items: Iterator, size: int) -> Iterator[list]:
    while batch := list(itertools.islice(items, size)):
        yield batch


def run_search(index: SearchIndex, queries: Iterator[tuple[int, str]], args, out: TextIO) -> int:
    """Search ``queries`` batch by batch, writing each batch's results as soon as it is ready."""
    from ehi.evaluate import trec
    from ehi.serve.formats import format_table, tsv_rows

    fmt = args.format or ("table" if args.query else "tsv")
    if fmt == "tsv":
        print("query_no\trank\tdoc_id\tscore\ttitle", file=out)
    vectors = bool(getattr(args, "query_vectors", None))  # (query id, vector) pairs, else numbered lines
    if fmt == "trec":
        run_tag = f"ehi@beam={index.check_beam(args.beam)}"
    if fmt == "trec" and not vectors:
        queries = (trec.query_id_and_text(no, line) for no, line in queries)
    elif not vectors:
        queries = ((no, line.strip()) for no, line in queries)
    n = short = 0
    for batch in _batches(queries, args.batch_size):
        texts = np.stack([q for _, q in batch]) if vectors else [q for _, q in batch]
        results = index.search(texts, beam=args.beam, k=args.k, batch_size=args.batch_size)
        for (no, query), hits in zip(batch, results):
            short += len(hits) < args.k
            if fmt == "trec":
                for row in trec.hit_lines(no, hits, run_tag):
                    print(row, file=out)
            elif fmt == "tsv":
                for row in tsv_rows(no, hits):
                    print(row, file=out)
            else:
                label = f"query vector {no}" if vectors else query
                print(("\n" if n else "") + format_table(label, hits, args.k), file=out)
            n += 1
        out.flush()
    if short:
        print(f"ehi search: {short} of {n} queries got fewer than -k {args.k} documents: their visited leaves "
              f"hold fewer (a larger --beam visits more leaves)", file=sys.stderr)
    return n


@contextlib.contextmanager
def _quiet_transformers(quiet: bool):
    """Silence the model loader's progress bars and load reports (they would bury the results);
    restore the previous settings afterwards, since main() also runs inside other programs."""
    from transformers.utils import logging as hf_logging

    level, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    if quiet:
        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)
        (hf_logging.enable_progress_bar if bars else hf_logging.disable_progress_bar)()


def _check_queries_file(args) -> None:
    """A missing query file, refused with its flag before the index loads (an OSError says only
    ``[Errno 2]`` and the path; --index and --doc-ids are refused by their loaders, which say what
    such a folder or file must hold)."""
    path = getattr(args, "queries_file", None)
    if path not in (None, "-") and not Path(path).is_file():
        raise SearchIndexError(f"--queries-file {path}: no such file")


def _check_args(args) -> None:
    from ehi.model.encoder import pick_device

    if args.k < 1:  # above the corpus size: capped once the index is open (_search)
        raise SearchIndexError(f"-k must be at least 1, got {args.k}")
    if args.batch_size < 1:
        raise SearchIndexError(f"--batch-size must be at least 1, got {args.batch_size}")
    pick_device(args.device)  # a device this machine lacks, before anything is loaded


@contextlib.contextmanager
def _output(path: str | None) -> Iterator[TextIO]:
    """stdout, or a temporary file renamed onto ``path`` only when the search finished."""
    from ehi.core.io import atomic_path

    if path is None:
        yield sys.stdout
        return
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as out:
        yield out


def _search(args) -> None:
    from ehi.evaluate import trec
    from ehi.serve.api import load_index

    _check_args(args)
    index = load_index(args.index, device=args.device)
    index.check_beam(args.beam)  # fail before reading any input
    args.k, note = capped_k(args.k, index.index.n_docs, "-k")
    if note:
        print(f"ehi search: {note}", file=sys.stderr)
    trec_run = args.format == "trec"
    if trec_run:  # a TREC line per hit: every id that could go into one, checked before the first
        trec.check_doc_ids(index.doc_ids, str(Path(args.index) / "docs.parquet"))
    with contextlib.ExitStack() as stack:
        if args.query_vectors:
            ids, vectors = vector_queries(args.query_vectors)
            index.check_query_vectors(vectors)  # the whole file's shape, before the first line is written
            check_query_rows(vectors, "--query-vectors")  # every row, likewise
            queries = ((query_id, np.asarray(vectors[row], dtype=np.float32)) for row, query_id in enumerate(ids))
        elif args.query:
            queries = list(enumerate(args.query, 1))
            if trec_run:
                qids = trec.UniqueQueryIds("--query")
                for no, text in queries:
                    qids(no, text)
            queries = iter(queries)
        else:  # every line checked before the first result is written
            name = "stdin" if args.queries_file == "-" else args.queries_file
            check = trec.UniqueQueryIds(name) if trec_run else None
            queries = stack.enter_context(checked_queries(args.queries_file, check))
        out = stack.enter_context(_output(args.out))
        with _quiet_transformers(not args.verbose):
            run_search(index, queries, args, out)


# export_faiss's refusals name its Python arguments; the command says its flags instead
EXPORT_FLAGS = (("doc_ids= (the prepared corpus.parquet it was built on, or a list of ids)",
                 "--doc-ids (the prepared corpus.parquet it was built on)"),
                ("row_ids=True", "--row-ids"), ("pq_m=", "--pq "), ("pq_m", "--pq M"), ("nbits", "--nbits"),
                ("rerank", "--rerank"))


def cli_wording(message: str) -> str:
    for argument, flag in EXPORT_FLAGS:
        message = re.sub(rf"(?<![\w-]){re.escape(argument)}", flag, message)
    return message


def _export(args) -> int:
    from ehi.search.exported import ExportError
    from ehi.serve.export_faiss import export_faiss

    try:
        exported = export_faiss(args.index, args.out, pq_m=args.pq, nbits=args.nbits, rerank=args.rerank,
                                doc_ids=args.doc_ids, row_ids=args.row_ids, beam=args.beam)
    except (ExportError, ValueError, SearchIndexError) as err:
        raise SearchIndexError(cli_wording(str(err))) from None
    meta = exported.meta
    print(f"wrote {args.out} ({meta['faiss_index']}, {meta['n_docs']} documents, {meta['n_leaves']} lists, "
          f"dim {meta['dim']}, nprobe {meta['nprobe']}) and {args.out}.json")
    if not meta["exact_in_faiss"]:
        print(f"note: height {meta['height']}: {meta['note']}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command != "compare":  # compare forwards signals to its Snakemake child (compare_run.py)
        from ehi.core.io import exit_on_termination

        exit_on_termination()  # SIGTERM, as SIGINT, removes the temporary file of --out
    pin_kernels()  # queries encoded on the kernels the pipeline embedded the corpus with
    # user errors (a broken index, a bad argument or query file, OSError on a named file): one
    # line, a non-zero exit, no traceback; anything else is a bug and keeps its traceback
    with exit_on_user_error(f"ehi {args.command}", also=(OSError,), verbose=args.verbose):
        _check_queries_file(args)
        try:
            if args.command == "compare":
                from ehi.serve.compare import compare

                return compare(args.folder, args.name, args.cores, args.seeds,
                               ["-n"] * args.dry_run + ["--unlock"] * args.unlock, args.out, args.quick, args.time)
            if args.command == "export-faiss":
                _export(args)
            elif args.command == "info":
                from ehi.serve.api import load_index

                from ehi.serve.formats import format_info

                info = load_index(args.index, device="cpu").info()
                print(json.dumps(info, indent=2, sort_keys=True) if args.json else format_info(args.index, info))
            else:
                _search(args)
        except BrokenPipeError:  # `ehi search ... | head`: stop quietly, and keep Python's exit flush quiet
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
