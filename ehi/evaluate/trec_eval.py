"""trec_eval without building C: ``python -m ehi.evaluate.trec_eval [-c] [-q] [-m MEASURE]... QRELS RUN``.

trec_eval's own measure code (pytrec_eval, installed with the ``[test]`` extra) under trec_eval's
arguments, in trec_eval's order (the judgements, then the run) and output (``measure  all  value``
lines, ``-q`` adding one line per query first). ``-c`` averages over every query of the qrels, one
missing from the run scoring 0, as the pipeline's metrics do; without it the average is over the
judged queries the run has. trec_eval 10.x refuses that case (exit status 4) and 9.x averages
silently; here the average is printed with a note on stderr saying how many judged queries the run
lacks and that ``-c`` scores them 0.

    python -m ehi.evaluate.trec_eval -c -m ndcg_cut.10 -m recall.100 qrels.txt beam=30.trec
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ehi.core.errors import DataError, exit_on_user_error

DEFAULT_MEASURES = ("map", "recip_rank", "P.10", "ndcg_cut.10", "recall.100")


def read_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """{qid: {docid: relevance}} of a qrels file (``qid iter docid relevance`` lines)."""
    return _read(path, 4, 3, int, "relevance")


def read_run(path: str | Path) -> dict[str, dict[str, float]]:
    """{qid: {docid: score}} of a run file (``qid Q0 docid rank score tag`` lines)."""
    return _read(path, 6, 4, float, "score")


def _read(path: str | Path, n_fields: int, value_at: int, cast, what: str) -> dict:
    """{field 0: {field 2: cast(field value_at)}} of a whitespace-separated file of ``n_fields`` a line."""
    out: dict = {}
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != n_fields:
                raise DataError(f"{path}, line {no}: {len(fields)} fields where this format has {n_fields}")
            try:
                out.setdefault(fields[0], {})[fields[2]] = cast(fields[value_at])
            except ValueError:
                raise DataError(f"{path}, line {no}: {what} {fields[value_at]!r} is not a number") from None
    return out


def evaluate(qrels: dict, run: dict, measures, complete: bool = False) -> tuple[dict, dict, list[str]]:
    """(per-query values {qid: {measure: value}}, the averages {measure: value}, the judged queries
    missing from the run). ``complete`` (``-c``): those queries score 0 and count in the average."""
    import pytrec_eval

    unknown = [m for m in measures if m.split(".")[0] not in pytrec_eval.supported_measures]
    if unknown:
        raise DataError(f"no trec_eval measure {', '.join(unknown)} (e.g. ndcg_cut.10, recall.100, map, P.10)")
    missing = sorted(set(qrels) - set(run))
    per_query = pytrec_eval.RelevanceEvaluator(qrels, set(measures)).evaluate(run)  # the judged queries the run has
    names = sorted({m for values in per_query.values() for m in values})
    if complete:
        per_query.update({q: dict.fromkeys(names, 0.0) for q in missing})
    means = {m: sum(v[m] for v in per_query.values()) / len(per_query) if per_query else 0.0 for m in names}
    return per_query, means, missing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ehi.evaluate.trec_eval", description=__doc__.split("\n\n")[0],
                                     epilog="example: python -m ehi.evaluate.trec_eval -c -m ndcg_cut.10 qrels.txt run.trec")
    parser.add_argument("qrels", help="judgements: 'qid iter docid relevance' lines")
    parser.add_argument("run", help="a run: 'qid Q0 docid rank score tag' lines")
    parser.add_argument("-m", dest="measures", action="append", metavar="MEASURE",
                        help=f"a trec_eval measure, e.g. ndcg_cut.10 (repeat; default: {' '.join(DEFAULT_MEASURES)})")
    parser.add_argument("-c", dest="complete", action="store_true",
                        help="average over every judged query, one missing from the run scoring 0")
    parser.add_argument("-q", dest="per_query", action="store_true", help="a line per query before the averages")
    args = parser.parse_args(argv)
    with exit_on_user_error("trec_eval", also=(OSError,)):
        qrels, run = read_qrels(args.qrels), read_run(args.run)
        per_query, means, missing = evaluate(qrels, run, args.measures or DEFAULT_MEASURES, args.complete)
    if args.per_query:
        for q in sorted(per_query):
            for m, value in sorted(per_query[q].items()):
                print(f"{m:<22}\t{q}\t{value:.4f}")
    for m, value in means.items():
        print(f"{m:<22}\tall\t{value:.4f}")
    if missing and not args.complete:
        print(f"trec_eval: {len(missing)} judged queries have no line in the run: averaged over the run's "
              f"{len(per_query)} instead; -c scores them 0, as the pipeline does", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
