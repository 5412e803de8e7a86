"""Every table a page shows, formatted for reading (:func:`lib.io.display.readable`); downloads keep every digit."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st
from pandas.io.formats.style import Styler

from lib.io.display import readable


def show_table(
    table: pd.DataFrame | Styler,
    *,
    key: str | None = None,
    formats: dict[str, str] | None = None,
    static: bool = False,
    hide_index: bool = True,
    **kwargs: Any,
) -> None:
    """Show ``table`` as a reader should see it: rounded numbers that still sort as numbers, counts as
    whole numbers, missing cells empty (:func:`lib.io.display.readable`).

    Parameters
    ----------
    table : DataFrame or Styler
        The full-precision table (a Styler: its colours are kept, its number formats replaced).
    key : str, optional
        The element's key.
    formats : dict, optional
        ``{column: printf format}``, e.g. ``"%.2e"`` for p-values.
    static : bool
        A static table (``st.table``: every cell as text, the index shown) instead of an interactive one.
    hide_index : bool
        Leave the index out (interactive tables).
    **kwargs
        Passed to ``st.dataframe`` (e.g. ``height``); a ``column_config`` entry's settings other than None are
        added to the column's number format.
    """
    styler = table if isinstance(table, Styler) else None
    shown = readable(styler.data if styler is not None else table, formats=formats)
    if static:
        st.table(shown.as_text())
        return
    data: pd.DataFrame | Styler = shown.frame
    config = {c: st.column_config.NumberColumn(format=f) for c, f in shown.formats.items()}
    if styler is not None:  # the display text is the Styler's, and a column format would take precedence over it
        data = shown.frame.style.use(styler.export())
        data = data.format({c: (lambda v, c=c: shown.text(c, v)) for c in shown.frame.columns})
        config = {}
    for column, given in kwargs.pop("column_config", {}).items():
        # a column's own settings (e.g. its help) join the number format chosen here, not replace it
        mine = dict(config.get(column, {}))
        config[column] = mine | {k: v for k, v in given.items() if v is not None} if isinstance(given, dict) else given
    st.dataframe(data, hide_index=hide_index, placeholder="", key=key, column_config=config, **kwargs)
