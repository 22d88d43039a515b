"""A view of a BEIR folder with its qrels splits renamed: `collections` build script (rule build_collection).

    python beir_view.py OUT SOURCE train=dev test=test

links OUT/corpus.jsonl and OUT/queries.jsonl to SOURCE's and OUT/qrels/<to>.tsv to
SOURCE/qrels/<from>.tsv for each `to=from`: e.g. NFCorpus's shared copy lacks its train split, so
config/nfcorpus.yaml trains on the release's dev queries under the name train. Nothing is copied.
"""

import sys
from pathlib import Path


def make_view(out: Path, source: Path, splits: dict[str, str]) -> None:
    source = source.resolve()
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    for name in ("corpus.jsonl", "queries.jsonl"):
        (out / name).symlink_to(source / name)
    for to, origin in splits.items():
        target = source / "qrels" / f"{origin}.tsv"
        if not target.is_file():
            raise SystemExit(f"beir_view: {target} not found")
        (out / "qrels" / f"{to}.tsv").symlink_to(target)


if __name__ == "__main__":
    out, source, *pairs = sys.argv[1:]
    make_view(Path(out), Path(source), dict(pair.split("=", 1) for pair in pairs))
