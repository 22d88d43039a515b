"""The ``ehi`` command's argument parser: its subcommands, their flags, descriptions and examples
(:mod:`ehi.serve.cli` runs them). Kept apart so ``ehi --help`` and ``--version`` import nothing heavy."""

from __future__ import annotations

import argparse

from ehi.core import __version__
from ehi.serve.compare import add_compare_parser

SEARCH_EXAMPLES = """examples:
  ehi search --index DIR --query "what causes fever" --beam 4 -k 10
  ehi search --index DIR --queries-file queries.txt --out run.tsv
  ehi search --index DIR --queries-file queries.tsv --format trec --out run.trec   # qid<TAB>text lines
  trec_eval -c -m ndcg_cut.10 qrels.txt run.trec   # -c: a query with no hits scores 0"""


EXPORT_EXAMPLES = """examples:
  ehi export-faiss --index DIR --out ehi.faiss             # IndexIVFFlat, nprobe = EHI's beam
  ehi export-faiss --index DIR --out ehi.faiss --pq 96     # 4-bit fast-scan PQ leaves
  python -c "import faiss; print(faiss.read_index('ehi.faiss').ntotal)"   # the documents it holds
"""


def build_parser() -> argparse.ArgumentParser:
    from ehi.evaluate import trec

    parser = argparse.ArgumentParser(
        prog="ehi", description="Search or describe an EHI search index, or export it to FAISS.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n  ehi search --index resources/synthetic/main/ehi/search_index --query \"leaf collapse\"\n"
               "  ehi info --index resources/synthetic/main/ehi/search_index\n  ehi search --help")
    parser.add_argument("--version", action="version", version=f"ehi {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="{search,info,export-faiss,compare}")
    search = sub.add_parser(
        "search", help="ranked documents for one or more queries", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Encode each query, route it down the tree with a beam (--beam leaves kept per level), score "
                    "the documents of the visited leaves exactly and print the best -k. A query whose visited "
                    "leaves hold fewer than -k documents gets fewer hits, and the command says so on stderr.",
        epilog=SEARCH_EXAMPLES)
    search.add_argument("--index", required=True, help="search-index directory (ehi.serve.api.save_search_index)")
    source = search.add_mutually_exclusive_group(required=True)
    source.add_argument("--query", action="append", help="a query text (repeat for several)")
    source.add_argument("--queries-file", metavar="FILE", help="one query per line; '-' reads stdin")
    source.add_argument("--query-vectors", metavar="FILE",
                        help="query vectors encoded elsewhere, a (n, dim) .npy or .safetensors file: no encoder "
                             "runs (an index of a vectors dataset); queries are named by query_ids.txt beside "
                             "FILE when it has a line a row, else by row number from 0")
    search.add_argument("--beam", type=int, default=None,
                        help="leaves kept per tree level (default: 4, capped at the leaf count; "
                             "the number of leaves = exact search)")
    search.add_argument("-k", type=int, default=10, help="documents per query (default: 10)")
    search.add_argument("--batch-size", type=int, default=64, help="queries encoded at once (default: 64)")
    search.add_argument("--format", choices=("table", "tsv", "trec"), default=None,
                        help="output format (default: table for --query, tsv for --queries-file); trec: "
                             f"'qid Q0 docid rank score tag' lines for trec_eval: {trec.QID_RULE}. "
                             "Every qid and doc id is checked before the first line is written")
    search.add_argument("--device", default="auto", help="encoder device: auto, cpu, cuda, ... (default: auto)")
    search.add_argument("--out", metavar="FILE", help="write the results to FILE (whole, or not at all) instead of stdout")
    search.add_argument("-v", "--verbose", action="store_true",
                        help="keep the model loader's messages; show the traceback of an error")
    add_compare_parser(sub)
    info = sub.add_parser(
        "info", help="tree shape, leaf balance and training config of an index",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Describe a saved search index: documents, the tree's height, branching and leaves, the leaf "
                    "sizes (min, median, max, gini, empty leaves), the encoder and the training config it records.",
        epilog="examples:\n  ehi info --index DIR\n  ehi info --index DIR --json | jq .leaf_sizes")
    info.add_argument("--index", required=True, help="search-index directory")
    info.add_argument("--json", action="store_true", help="print the description as JSON")
    info.add_argument("-v", "--verbose", action="store_true", help="show the traceback of an error")
    export = sub.add_parser(
        "export-faiss", help="write the index as a FAISS file (+ FILE.json)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Write the index as a FAISS index file that faiss.read_index loads: an IndexIVFFlat whose "
                    "inverted lists are EHI's leaves (height 1: the same documents scored, nprobe = beam), or "
                    "with --pq product-quantized leaves; FILE.json beside it holds the document ids and the "
                    "export's settings.", epilog=EXPORT_EXAMPLES)
    export.add_argument("--index", required=True, help="search-index (or EHI index) directory")
    export.add_argument("--out", required=True, metavar="FILE", help="FAISS file to write; FILE.json goes beside it")
    export.add_argument("--pq", type=int, default=None, metavar="M",
                        help="product-quantize the leaves with M sub-quantizers (M divides the dimension)")
    export.add_argument("--nbits", type=int, choices=(4, 8), default=4,
                        help="bits per PQ code: 4 = fast scan, 8 = IndexIVFPQ (default: 4)")
    export.add_argument("--rerank", type=int, default=0, metavar="R",
                        help="re-score the best R candidates exactly (IndexRefineFlat; default: 0 = off)")
    export.add_argument("--beam", type=int, default=None, metavar="B",
                        help="the nprobe the file opens at (default: the beam the search index chose on dev)")
    export.add_argument("--doc-ids", metavar="CORPUS", default=None,
                        help="an EHI index directory's document ids: the prepared corpus.parquet it was built on")
    export.add_argument("--row-ids", action="store_true",
                        help="an EHI index directory without --doc-ids: export corpus row numbers as ids")
    export.add_argument("-v", "--verbose", action="store_true", help="show the traceback of an error")
    return parser

