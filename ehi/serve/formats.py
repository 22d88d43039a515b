"""How ``ehi search`` and ``ehi info`` print: a readable table of one query's hits, TSV rows, and an
index's description."""

from __future__ import annotations

from typing import Iterator

from ehi.serve.api import Hit

TITLE_WIDTH = 80


def _one_line(text: str) -> str:
    return " ".join(str(text).split())  # tabs and newlines would break a TSV row


def _short(text: str, width: int = TITLE_WIDTH) -> str:
    text = _one_line(text)
    return text if len(text) <= width else text[: width - 1] + "…"


def format_table(query: str, hits: list[Hit], k: int | None = None) -> str:
    """A readable ranked list: rank, score, doc_id, title."""
    lines = [f"query: {query}"]
    if not hits:
        return "\n".join(lines + ["  (no documents in the visited leaves)"])
    if k is not None and len(hits) < k:
        lines[0] += f"  ({len(hits)} of -k {k}: the visited leaves hold no more)"
    id_width = max(6, *(len(h.doc_id) for h in hits))
    lines.append(f"{'rank':>4}  {'score':>8}  {'doc_id':<{id_width}}  title")
    for rank, hit in enumerate(hits, 1):
        lines.append(f"{rank:>4}  {hit.score:>8.4f}  {hit.doc_id:<{id_width}}  {_short(hit.title)}")
    return "\n".join(lines)


def tsv_rows(query_no: int, hits: list[Hit]) -> Iterator[str]:
    for rank, hit in enumerate(hits, 1):
        yield f"{query_no}\t{rank}\t{_one_line(hit.doc_id)}\t{hit.score:.6f}\t{_one_line(hit.title)}"


def format_info(path: str, info: dict) -> str:
    tree, leaves, enc = info["tree"], info["leaf_sizes"], info["encoder"]
    lines = [
        f"index:       {path}",
        f"documents:   {info['n_docs']}",
        f"tree:        height H={tree['height']}, branching B={tree['branching']}, {tree['n_leaves']} leaves, "
        f"dim {tree['dim']}, path layout {tree['path_layout']}",
        f"leaf sizes:  min {leaves['min']}, median {leaves['median']:g}, max {leaves['max']}, "
        f"mean {leaves['mean']:.1f}, gini {leaves['gini']:.3f}, empty {leaves['empty']}",
        "encoder:     none (it searches query vectors: --query-vectors)" if not enc else
        f"encoder:     a vector tower over {enc.get('source', '?')} (it searches query vectors: --query-vectors)"
        if enc.get("vectors") else f"encoder:     {enc.get('source', '?')} (max_length {enc.get('max_length', '?')})",
        "training config:" + ("" if info["train_config"] else " (none recorded)"),
    ]
    lines += [f"  {key}: {value}" for key, value in sorted(info["train_config"].items())]
    return "\n".join(lines)
