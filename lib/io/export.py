"""Every CSV and output folder the project writes, made safe to open in a spreadsheet, and read back as written.

Spreadsheet formula injection (OWASP, "CSV Injection"): a text cell that starts with ``=``, ``+``,
``-``, ``@``, a tab or a carriage return is run as a formula by Excel, LibreOffice and Google
Sheets. Such text cells get a leading single quote, which spreadsheets show as plain text. Numeric
columns are left alone (so ``-0.5`` stays a number), and so is text that reads as a number.

The project's own reader (:func:`lib.io.tables.read_csv`) undoes that quote (:func:`unneutral`), so a file
the project wrote comes back with every name as it was: a study's export ranked, the ranking's next
batch added to the study, ``-minus`` and ``@cf/...`` stay themselves (issue 31). A text that itself
starts with the quote and then one of those characters (or a second quote) gets one more quote on the
way out, so writing then reading gives back every text exactly.
"""

from __future__ import annotations

import fnmatch
import shutil
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from lib.errors import OutputError

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet treat a cell as a formula (OWASP)."""

QUOTE = "'"
"""The quote put before such a cell (spreadsheets show the rest as text)."""

_QUOTED = (*FORMULA_START, QUOTE)
"""What follows the quote in a cell the writer quoted (see the module's text)."""


def neutral(value: object) -> object:
    """``value`` as a spreadsheet cannot run it: a text starting with one of :data:`FORMULA_START` (unless
    it reads as a number) or with :data:`QUOTE` and one of those gets a leading :data:`QUOTE`; anything
    else is returned as it is."""
    if not isinstance(value, str):
        return value
    if value.startswith(FORMULA_START):
        try:
            float(value)  # "-1.5" is a number written as text: no formula, keep it
            return value
        except ValueError:
            return QUOTE + value
    return QUOTE + value if value.startswith(QUOTE) and value[1:2] in _QUOTED else value  # a tuple: '' is not in it


def unneutral(value: str) -> str:
    """The text :func:`neutral` was given: one leading :data:`QUOTE` removed where :func:`neutral` adds one
    (``unneutral(neutral(t)) == t`` for every text ``t``)."""
    return value[1:] if value.startswith(QUOTE) and value[1:2] in _QUOTED else value


def unneutralise(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` (text cells, as :func:`lib.io.tables.read_csv` reads them) with :func:`unneutral` applied to
    every cell and column name; changed in place and returned."""
    for col in df.columns:
        cells = df[col]
        quoted = cells.str.startswith(QUOTE)  # most files have no such cell: one pass, nothing else
        if quoted.any():
            ours = quoted & cells.str.slice(1, 2).isin(_QUOTED)  # unneutral, vectorised
            df.loc[ours, col] = cells[ours].str.slice(1)
    df.columns = [unneutral(str(c)) for c in df.columns]
    return df


def neutralise(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` whose text cells (and column names) cannot start a formula.

    Parameters
    ----------
    df : DataFrame
        Any table; only object / string columns are touched.

    Returns
    -------
    DataFrame
        Same shape and dtypes; text cells :func:`neutral` quotes get a leading ``'``.
    """
    out = df.copy()
    for col in out.columns:
        if out[col].dtype == object or pd.api.types.is_string_dtype(out[col].dtype):
            out[col] = out[col].map(neutral)
    out.columns = [neutral(c) for c in out.columns]
    return out


def csv_text(df: pd.DataFrame) -> str:
    """The table as CSV text (no index), formula cells neutralised: for downloads."""
    return neutralise(df).to_csv(index=False)


def write_csv(df: pd.DataFrame, path: str | Path) -> Path:
    """Write ``df`` as CSV (no index) with formula cells neutralised; return the path."""
    path = Path(path)
    path.write_text(csv_text(df), encoding="utf-8")
    return path


def prepare_out(out: str | Path, own: Sequence[str], *, overwrite: bool = False) -> Path:
    """Check and create an output folder before any computation.

    Parameters
    ----------
    out : str or Path
        The folder (created with its parents when missing).
    own : sequence of str
        Names (glob patterns allowed, e.g. ``subset_*.csv``) of the files the command writes.
    overwrite : bool
        Allow a folder that is not empty: the command's own files are removed first, anything
        else in it is kept.

    Returns
    -------
    Path

    Raises
    ------
    OutputError
        ``out`` is a file, cannot be created or written, or is not empty and ``overwrite`` is off.
    """
    path = Path(out)
    if path.exists() and not path.is_dir():
        raise OutputError("--out names a file, not a folder", file=str(path))
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".write-test"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as err:
        raise OutputError(f"cannot write to this folder ({err.strerror or err})", file=str(path)) from None
    present = sorted(p.name for p in path.iterdir())
    if present and not overwrite:
        shown = ", ".join(present[:5]) + (" …" if len(present) > 5 else "")
        raise OutputError(f"the folder is not empty ({shown}); choose an empty one or pass --overwrite", file=str(path))
    for name in present:
        if any(fnmatch.fnmatch(name, pattern) for pattern in own):
            target = path / name
            shutil.rmtree(target) if target.is_dir() else target.unlink()
    return path
