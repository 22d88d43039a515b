"""One look per system, the same in every figure: colour, marker, line style and weight.

A KMR figure draws a dozen systems; two colours and five line styles leave several of them
indistinguishable. Here each known system has its own colour (EHI's encoder in reds and browns, the
dual encoder in blues and greens, the untrained encoder grey), each search method its marker, each
encoder its line style, and EHI's own search (its tree) a thick line drawn on top. A system not
listed (a plugin's) gets a colour from its name, so it too keeps one colour everywhere.
"""

from __future__ import annotations

import zlib

COLOURS = {
    "ehi+tree": "#d62728", "ehi-warm+tree": "#7f0000", "ehi+tree-pq": "#ff9896", "ehi-warm+tree-pq": "#c45a5a",
    "ehi+exact": "#ff7f0e", "ehi-warm+exact": "#b35806",
    "ehi+faiss-ivf": "#e377c2", "ehi+faiss-hnsw": "#9467bd", "ehi+scann": "#8c564b", "ehi+scann-ah": "#c49c94",
    "ehi+faiss-ivf-pq": "#f7b6d2",
    "de+exact": "#1f77b4", "de+faiss-ivf": "#17becf", "de+faiss-hnsw": "#2ca02c", "de+scann": "#bcbd22",
    "de+scann-ah": "#1a3a6b", "de+faiss-ivf-pq": "#98df8a",
    "pre+exact": "#7f7f7f",
}
_FALLBACK = ["#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d", "#31a354"]
MARKERS = {"tree": "o", "tree-pq": "o", "exact": "*", "faiss-ivf": "s", "faiss-ivf-pq": "s", "faiss-hnsw": "^",
           "scann": "D", "scann-ah": "x"}
LINESTYLES = {"ehi": "-", "de": "--", "pre": ":"}


def is_ehi_search(system: str) -> bool:
    """EHI's own search: its tree (plain or compressed) on an EHI encoder (``ehi-warm`` included)."""
    encoder, _, search = system.partition("+")
    return encoder.split("-")[0] == "ehi" and search.startswith("tree")


def colour(system: str) -> str:
    return COLOURS.get(system) or _FALLBACK[zlib.crc32(system.encode()) % len(_FALLBACK)]


def style(system: str) -> dict:
    """Matplotlib keywords of one system's line (``plot(..., **style(system))``)."""
    encoder, _, search = system.partition("+")
    ehi = is_ehi_search(system)
    return {"color": colour(system), "marker": MARKERS.get(search, "."),
            "linestyle": LINESTYLES.get(encoder.split("-")[0], "-"),
            "linewidth": 2.6 if ehi else 1.3, "zorder": 3 if ehi else 2, "alpha": 1.0 if ehi else 0.85}
