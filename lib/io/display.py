"""Tables as a reader should see them: a few significant digits, counts as whole numbers, missing cells
empty; never ``999.9999999999974``, ``0.180000``, ``None``, ``nan`` or ``Infinity``.

One rule for every table a page shows (``ui.tables.show_table``) and the HTML report: :func:`readable`.
Downloads and command outputs keep every digit (:func:`lib.io.export.csv_text`): only what is read on
screen is rounded.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

SIGNIFICANT = 4
"""Significant digits shown of a number that is not a count; the whole part of a number is always
shown whole (42995.21 reads 42995, 999.9999999999974 reads 1000, 0.061179 reads 0.06118)."""

SCIENTIFIC_BELOW = 1e-3
"""A column holding a non-zero value smaller than this in size (p-values, small probabilities) is shown
in scientific notation: in fixed notation such a value reads 0 or loses its digits."""

SCIENTIFIC = f"%.{SIGNIFICANT - 1}e"
"""printf format of a scientific column (``8.481e-23``): Python's ``%`` and the browser read it alike."""

COUNT_WORDS = frozenset(
    {
        "annotators",
        "chains",
        "comparisons",
        "count",
        "divergences",
        "draws",
        "drafts",
        "edits",
        "items",
        "judgments",
        "n",
        "needed",
        "pages",
        "pairs",
        "prompts",
        "rows",
        "systems",
        "verdicts",
        "votes",
    }
)
"""A column is a count when its name is one of these words or ends with ``_`` and one (``n``, ``n_votes``,
``human_items``, ``judge_verdicts``, ``prompts``, ``k_needed``; not ``n_star``, the real-valued break-even
n*): shown as a whole number also when it is computed as a float (a planned 42995.21 verdicts reads 42995)."""

INFINITE = "∞"


def is_count(name: object) -> bool:
    """Whether a column named ``name`` holds counts (:data:`COUNT_WORDS`)."""
    return str(name).lower().split("_")[-1] in COUNT_WORDS


def round_significant(values, digits: int = SIGNIFICANT) -> np.ndarray:
    """Each value rounded to ``digits`` significant digits, but never within its whole part.

    Parameters
    ----------
    values : array_like of float
    digits : int
        Significant digits kept, >= 1.

    Returns
    -------
    ndarray of float
        Same shape; NaN and infinite values unchanged, -0.0 as 0.0.
    """
    x = np.array(values, dtype=float)
    ok = np.isfinite(x) & (x != 0)
    decimals = np.clip(digits - 1 - np.floor(np.log10(np.abs(x[ok]))), 0, 300)
    scale = 10.0**decimals
    x[ok] = np.round(x[ok] * scale) / scale  # integers divided by a power of ten: the nearest float to the decimal
    return x + 0.0


def cell_text(value: object, fmt: str | None = None, *, count: bool = False) -> str:
    """One cell as text, by the rule of :func:`readable` ("" when missing).

    Parameters
    ----------
    value : object
        A number, a string or a missing value (None, NaN, ``pd.NA``).
    fmt : str, optional
        printf format of a number (e.g. ``"%.2e"``); by default :data:`SIGNIFICANT` digits, or
        :data:`SCIENTIFIC` for a non-zero value below :data:`SCIENTIFIC_BELOW` in size.
    count : bool
        The value is a count: a whole number.

    Returns
    -------
    str
    """
    if _missing(value):
        return ""
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.integer | np.floating):
        return str(value)
    number = float(value)
    if math.isinf(number):
        return INFINITE if number > 0 else f"-{INFINITE}"
    if fmt is not None:
        return fmt % value
    if isinstance(value, int | np.integer):
        return str(value)
    if count:
        return str(round(number))
    if number != 0 and abs(number) < SCIENTIFIC_BELOW:
        return SCIENTIFIC % number
    shown = float(round_significant([number])[0])
    decimals = max(0, SIGNIFICANT - 1 - math.floor(math.log10(abs(shown)))) if shown else 0
    text = f"{shown:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


@dataclass(frozen=True)
class ReadableTable:
    """A table as shown (:func:`readable`).

    Attributes
    ----------
    frame : DataFrame
        The values shown: numbers rounded (still numbers, so a column sorts by value), counts as
        nullable integers, missing cells as missing (shown empty); a column with an infinite value, or
        mixing numbers and words, as text.
    formats : dict of str to str
        printf format of the number columns that need one (:data:`SCIENTIFIC`, or the caller's); the
        others read as the browser shows a number (at most 4 decimals, trailing zeros dropped).
    counts : frozenset of str
        The count columns.
    """

    frame: pd.DataFrame
    formats: dict[str, str] = field(default_factory=dict)
    counts: frozenset[str] = frozenset()

    def text(self, column: object, value: object) -> str:
        """``value`` of ``column`` as text (:func:`cell_text` with the column's format)."""
        return cell_text(value, self.formats.get(str(column)), count=str(column) in self.counts)

    def as_text(self) -> pd.DataFrame:
        """Every cell as text (a static table, the HTML report); missing cells "" ."""
        out = self.frame.copy()
        for col in out.columns:
            out[col] = [self.text(col, v) for v in self.frame[col]]
        return out


def readable(df: pd.DataFrame, *, formats: Mapping[str, str] | None = None) -> ReadableTable:
    """``df`` as a reader should see it: the one formatting rule of every table shown.

    * counts (integer columns, and float columns named as counts, :func:`is_count`): whole numbers,
      ``Int64``;
    * other numbers: :func:`round_significant` (:data:`SIGNIFICANT` digits), in scientific notation
      for a column with a non-zero value below :data:`SCIENTIFIC_BELOW` in size;
    * missing values (None, NaN, ``pd.NA``): missing, to be shown empty;
    * a column with an infinite value or mixing numbers with words: text (``∞``, the numbers by the
      same rule), as one type for Streamlit's Arrow tables;
    * booleans, words and other types: as they are.

    Parameters
    ----------
    df : DataFrame
    formats : mapping, optional
        ``{column: printf format}`` of number columns, e.g. ``"%.2e"`` for p-values.

    Returns
    -------
    ReadableTable
        Same columns and rows (and index).
    """
    out = df.copy()
    shown_formats: dict[str, str] = {}
    counts: set[str] = set()
    for col in out.columns:
        series, name = out[col], str(col)
        fmt = (formats or {}).get(name)
        if pd.api.types.is_bool_dtype(series.dtype):
            continue
        if pd.api.types.is_integer_dtype(series.dtype):
            counts.add(name)
            continue
        if pd.api.types.is_float_dtype(series.dtype):
            values = series.to_numpy(dtype=float, na_value=np.nan)
            count = is_count(name)
            if np.isinf(values).any():
                out[col] = [None if np.isnan(v) else cell_text(v, fmt, count=count) for v in values]
            elif count:
                counts.add(name)
                out[col] = pd.array(np.where(np.isnan(values), np.nan, np.rint(values)), dtype="Int64")
            else:
                out[col] = round_significant(values)
                small = (values != 0) & (np.abs(values) < SCIENTIFIC_BELOW)
                fmt = fmt or (SCIENTIFIC if small.any() else None)
                if fmt:
                    shown_formats[name] = fmt
            continue
        if series.dtype == object or pd.api.types.is_string_dtype(series.dtype):
            out[col] = [None if _missing(v) else cell_text(v, fmt) for v in series]
    return ReadableTable(out, shown_formats, frozenset(counts))


def _missing(value: object) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float | np.floating) and math.isnan(value))
