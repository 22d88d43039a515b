"""One look per system, the same in every figure: colour, marker, line style and weight.

A KMR figure draws a dozen systems; two colours and five line styles leave several of them
indistinguishable. Each search's registry entry (ehi.search.registry) gives its systems' colours
by encoder (EHI's encoder in reds and browns, the dual encoder in blues and greens, the untrained
encoder grey), its marker, whether the paper ran it, and whether it is EHI's own search (the tree,
drawn as a thick line on top); here each encoder gets its line style. A system its entry gives no
colour (a plugin's) gets one from its name, so it too keeps one colour everywhere. A system beyond
the paper (such a baseline, EHI's compressed tree, an encoder recipe such as ``ehi-warm``) is
labelled with a dagger, explained on the figure.
Every axis of a fraction scored is in percent on a log scale, with the same ticks.
"""

from __future__ import annotations

import zlib

_FALLBACK = ["#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d", "#31a354"]
LINESTYLES = {"ehi": "-", "de": "--", "pre": ":"}
PAPER_ENCODERS = ("ehi", "de", "pre")  # the paper's encoders; a recipe variant (ehi-warm, ehi-floor) is beyond
BEYOND = " †"
BEYOND_NOTE = "† beyond the paper"
PERCENT_TICKS = (0.1, 1, 2, 5, 10, 20, 100)  # % of documents scored
SHORT = 40  # characters: a one-row ablation's settings longer than this are left to the footnote


def _kind(search: str):
    from ehi.search.registry import ann_kind, searches

    return ann_kind(search) if search in searches() else None


def _registry_colours() -> dict[str, str]:
    from ehi.search.registry import entries

    return {f"{encoder}+{kind.name}": c for kind in entries(plugins=False) for encoder, c in kind.colours}


COLOURS = _registry_colours()  # {system: colour} of the built-in entries; colour() reads plugins' too


def marker(search: str) -> str:
    kind = _kind(search)
    return kind.marker if kind is not None else "."


def beyond_paper(system: str) -> bool:
    """A system the paper did not run: an encoder recipe of this project, EHI's compressed tree, or
    a baseline whose registry entry says so (a plugin's kind included)."""
    encoder, _, search = system.partition("+")
    if encoder not in PAPER_ENCODERS:
        return True
    kind = _kind(search)
    return kind is None or not kind.in_paper


def label(system: str) -> str:
    """A system's legend entry: its name, with the dagger when it is beyond the paper."""
    return system + BEYOND if beyond_paper(system) else system


def note_beyond(fig, systems, below: bool = False) -> None:
    """The dagger's meaning, at the figure's lower right, when one of ``systems`` carries it;
    ``below``: under the figure's lower edge (the saved figure's tight box takes it in), clear of
    an x label as long as the axis (a KMR figure's on the work axis)."""
    if any(beyond_paper(s) for s in systems):
        fig.text(0.995, 0.0 if below else 0.005, BEYOND_NOTE, ha="right", va="top" if below else "bottom", fontsize=7,
                 color="0.3")


def percent_axis(ax, label: str = "documents scored per query (% of corpus, log scale)") -> None:
    """A fraction-scored x axis (values already in percent): log scale, the same percent ticks."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator(PERCENT_TICKS))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}%"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(label)


def is_ehi_search(system: str) -> bool:
    """EHI's own search (an entry marked ``ehi_search``: the tree, plain or compressed) on an EHI
    encoder (``ehi-warm`` included)."""
    encoder, _, search = system.partition("+")
    kind = _kind(search)
    return encoder.split("-")[0] == "ehi" and kind is not None and kind.ehi_search


def tree_colour(encoder: str = "ehi") -> str:
    """The colour of ``encoder``'s tree: the first registry entry marked as EHI's own search."""
    from ehi.search.registry import entries

    return next(k.colour_of(encoder) for k in entries(plugins=False) if k.ehi_search and k.colour_of(encoder))


def colour(system: str) -> str:
    encoder, _, search = system.partition("+")
    kind = _kind(search)
    given = kind.colour_of(encoder) if kind is not None else None
    return given or _FALLBACK[zlib.crc32(system.encode()) % len(_FALLBACK)]


def style(system: str) -> dict:
    """Matplotlib keywords of one system's line (``plot(..., **style(system))``)."""
    encoder, _, search = system.partition("+")
    ehi = is_ehi_search(system)
    return {"color": colour(system), "marker": marker(search),
            "linestyle": LINESTYLES.get(encoder.split("-")[0], "-"),
            "linewidth": 2.6 if ehi else 1.3, "zorder": 3 if ehi else 2, "alpha": 1.0 if ehi else 0.85}


def variant_names(ablation_rows: dict[str, list[dict[str, str]]]) -> dict[str, str]:
    """{variant path: the name a figure shows}, from each ablation's rows' settings
    (:func:`ehi.core.config_schema.ablation_rows`): the config's ablation name and the settings that
    differ between its rows ("tree shape: height 1"), or all of a one-row table's when they are
    short ("loss terms: lambda_indexing 0.0"), else the name alone ("floor"); "main setting" for
    main. The path itself goes in a footnote."""
    from ehi.core.config_schema import variant_path

    names = {"main": "main setting"}
    for ablation, settings in ablation_rows.items():
        title = ablation.replace("_", " ")
        differing = [k for k in settings[0] if len({row.get(k) for row in settings}) > 1] if len(settings) > 1 else []
        for row in settings:
            said = ", ".join(f"{k} {row[k]}" for k in (differing or row))
            names[variant_path(row)] = title if len(settings) == 1 and len(said) > SHORT else f"{title}: {said}"
    return names


def note_variants(fig, names: dict[str, str], shown) -> None:
    """A footnote with the config path of every renamed variant among ``shown``."""
    lines = [f"{names[v]} = {v}" for v in shown if v in names and v != "main" and names[v] != v]
    if lines:
        # below the figure's edge: the saved figure's tight box takes it in, clear of the axes
        fig.text(0.005, -0.01, "\n".join(lines), ha="left", va="top", fontsize=6, color="0.35")
