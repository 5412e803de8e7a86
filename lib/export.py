"""Every CSV and output folder the project writes, made safe to open in a spreadsheet.

Spreadsheet formula injection (OWASP, "CSV Injection"): a text cell that starts with ``=``, ``+``,
``-``, ``@``, a tab or a carriage return is run as a formula by Excel, LibreOffice and Google
Sheets. Such text cells get a leading single quote, which spreadsheets show as plain text. Numeric
columns are left alone (so ``-0.5`` stays a number), and so is text that reads as a number.
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


def _neutral(value: object) -> object:
    if not isinstance(value, str) or not value.startswith(FORMULA_START):
        return value
    try:
        float(value)  # "-1.5" is a number written as text: no formula, keep it
        return value
    except ValueError:
        return "'" + value


def neutralise(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` whose text cells (and column names) cannot start a formula.

    Parameters
    ----------
    df : DataFrame
        Any table; only object / string columns are touched.

    Returns
    -------
    DataFrame
        Same shape and dtypes; text cells starting with one of ``FORMULA_START`` get a leading ``'``.
    """
    out = df.copy()
    for col in out.columns:
        if out[col].dtype == object or pd.api.types.is_string_dtype(out[col].dtype):
            out[col] = out[col].map(_neutral)
    out.columns = [_neutral(c) for c in out.columns]
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
