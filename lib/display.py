"""Tables as a reader should see them: missing and infinite values spelled out, not None / Infinity.

Downloads keep the raw numbers (blank and ``inf`` in CSV); only what is shown on a page goes
through :func:`readable`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

MISSING = "—"
INFINITE = "∞"


def _cell(value: float, fmt: str) -> str:
    if np.isnan(value):
        return MISSING
    if np.isinf(value):
        return INFINITE if value > 0 else f"-{INFINITE}"
    return fmt.format(value)


def readable(df: pd.DataFrame, *, formats: Mapping[str, str] | None = None) -> pd.DataFrame:
    """A copy of ``df`` for display in which no cell reads None, nan, <NA> or inf.

    Numeric columns with a missing or infinite value become text: missing as :data:`MISSING`,
    infinite as :data:`INFINITE`, the other values by ``formats[column]`` (default ``{:.4g}``, whole
    numbers for integer columns). Columns with only finite numbers stay numbers; other columns
    become text, missing cells :data:`MISSING` (a column of mixed numbers and words, such as a
    break-even n or "never", is then one type for Streamlit's Arrow tables).

    Parameters
    ----------
    df : DataFrame
    formats : mapping, optional
        ``{column: format string}`` for the finite values of converted columns, e.g. ``"{:.2e}"``.

    Returns
    -------
    DataFrame
        Same columns and rows.
    """
    out = df.copy()
    for col in out.columns:
        series = out[col]
        if pd.api.types.is_bool_dtype(series.dtype):
            continue
        if not pd.api.types.is_numeric_dtype(series.dtype):
            out[col] = [MISSING if pd.isna(v) else str(v) for v in series]  # one type for Arrow
            continue
        values = series.to_numpy(dtype=float, na_value=np.nan)
        if np.isfinite(values).all():
            continue
        default = "{:.0f}" if pd.api.types.is_integer_dtype(series.dtype) else "{:.4g}"
        fmt = (formats or {}).get(col, default)
        out[col] = [_cell(v, fmt) for v in values]
    return out
