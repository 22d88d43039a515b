"""A table's CSV and Markdown written as one: both replace their predecessors together or neither
does (:func:`ehi.core.io.staged_files`), for the rules that render a committed table pair."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd


def write_table_pair(table: pd.DataFrame, csv: str | os.PathLike, markdown: str, md: str | os.PathLike) -> None:
    """``table`` as CSV at ``csv`` (4 decimals) and ``markdown`` at ``md``, two files of one folder."""
    from ehi.core.io import staged_files

    csv, md = Path(csv), Path(md)
    if csv.parent != md.parent:
        raise ValueError(f"{csv} and {md}: a table pair lives in one folder")
    with staged_files(csv.parent) as tmp:
        table.to_csv(tmp / csv.name, index=False, float_format="%.4f")
        (tmp / md.name).write_text(markdown)
