"""Read drafts (CSV) and uploaded edits (JSON lines or CSV in the edit schema) with clear errors."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import IO

import pandas as pd

from lib.errors import FormatError
from lib.revision.schema import EDIT_COLUMNS, EDIT_FIELDS

DRAFT_ROLES: tuple[str, ...] = ("text_id", "system", "draft", "reference")
UPLOADED_EDITOR = "uploaded"


def _read_text(source: str | Path | IO[bytes], name: str) -> str:
    try:
        raw = Path(source).read_bytes() if isinstance(source, (str, Path)) else source.read()
    except OSError as err:
        raise FormatError(f"cannot read the file ({err.strerror})", file=name) from err
    try:
        return raw.decode("utf-8-sig") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError as err:
        raise FormatError(f"not UTF-8 text (byte {err.start})", file=name) from err


def _rename(frame: pd.DataFrame, columns: dict[str, str], roles: tuple[str, ...], name: str) -> pd.DataFrame:
    unknown = sorted(set(columns) - set(roles))
    if unknown:
        raise FormatError(f"unknown role(s) {', '.join(unknown)} in the column mapping; roles are "
                          f"{', '.join(roles)}", file=name)
    absent = [c for c in columns.values() if c not in frame.columns]
    if absent:
        raise FormatError(f"mapped column(s) {', '.join(absent)} not in the file (it has "
                          f"{', '.join(map(str, frame.columns))})", file=name)
    return frame.rename(columns={v: k for k, v in columns.items()})


def read_drafts(source: str | Path | IO[bytes], name: str | None = None, *,
                columns: dict[str, str] | None = None, need_reference: bool = False) -> pd.DataFrame:
    """Drafts CSV with columns ``text_id, system, draft`` and optionally ``reference``.

    Parameters
    ----------
    source : path or binary file
    name : str, optional
        File name used in error messages (default: the path).
    columns : dict, optional
        ``{role: file_column}`` for files whose column names differ (``--columns``).
    need_reference : bool
        Require a non-empty ``reference`` in every row (diff-based engine).

    Returns
    -------
    DataFrame
        ``text_id, system, draft`` (str) and ``reference`` (str) when present.

    Raises
    ------
    FormatError
        Unparsable file, missing column, empty draft or reference, duplicate (text_id, system).
    """
    name = name or str(source)
    try:
        frame = pd.read_csv(io.StringIO(_read_text(source, name)), dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        raise FormatError(f"not a readable CSV file ({err})", file=name) from err
    frame = _rename(frame, columns or {}, DRAFT_ROLES, name)
    needed = ["text_id", "system", "draft"] + (["reference"] if need_reference else [])
    for col in needed:
        if col not in frame.columns:
            raise FormatError(f"missing column '{col}' (the file has {', '.join(map(str, frame.columns))}; "
                              "map yours with ROLE=NAME)", file=name, column=(columns or {}).get(col, col))
    present = [c for c in DRAFT_ROLES if c in frame.columns]
    frame = frame[present].copy()
    for col in ("text_id", "system", "draft") + (("reference",) if need_reference else ()):
        blank = (frame[col].str.strip() == "").to_numpy().nonzero()[0]
        if blank.size:
            raise FormatError(f"empty {col}", file=name, rows=(blank + 1).tolist(), column=(columns or {}).get(col, col))
    dup = frame.duplicated(["text_id", "system"], keep="first").to_numpy().nonzero()[0]
    if dup.size:
        raise FormatError("the same (text_id, system) appears more than once", file=name, rows=(dup + 1).tolist())
    return frame.reset_index(drop=True)


def read_edits(source: str | Path | IO[bytes], name: str | None = None, *,
               columns: dict[str, str] | None = None) -> pd.DataFrame:
    """Edits from another tool: JSON lines (one edit per line) or CSV, in the edit schema.

    Required per edit: ``text_id, system`` and the six schema fields; optional ``editor``
    (default ``uploaded``). ``edit_index`` is the order within each (text_id, system, editor).
    An empty ``revised_snippet`` is a deletion. Other fields (e.g. ``located``) are ignored: edits
    are located again against the drafts.

    Returns
    -------
    DataFrame
        :data:`~lib.revision.schema.EDIT_COLUMNS`, all text as str.

    Raises
    ------
    FormatError
        A line that is not a JSON object, a missing field, or a non-text value.
    """
    name = name or str(source)
    text = _read_text(source, name)
    if str(name).lower().endswith((".jsonl", ".json", ".ndjson")) or text.lstrip().startswith("{"):
        records = []
        for line_no, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                raise FormatError(f"line is not valid JSON ({err.msg})", file=name, rows=[line_no]) from err
            if not isinstance(record, dict):
                raise FormatError("line is not a JSON object", file=name, rows=[line_no])
            records.append(record)
        frame = pd.DataFrame.from_records(records)
    else:
        try:
            frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
        except (pd.errors.ParserError, pd.errors.EmptyDataError) as err:
            raise FormatError(f"not a readable CSV or JSON lines file ({err})", file=name) from err
    frame = _rename(frame, columns or {}, ("text_id", "system", "editor", *EDIT_FIELDS), name)
    for col in ("text_id", "system", *EDIT_FIELDS):
        if col not in frame.columns:
            raise FormatError(f"missing field '{col}'", file=name, column=col)
        bad = frame[col].map(lambda v: not isinstance(v, (str, int, float)) or v != v).to_numpy().nonzero()[0]
        if bad.size:
            raise FormatError(f"'{col}' is missing or not text", file=name, rows=(bad + 1).tolist(), column=col)
    if "editor" not in frame.columns:
        frame["editor"] = UPLOADED_EDITOR
    frame = frame.astype({c: str for c in ("text_id", "system", "editor", *EDIT_FIELDS)})
    frame["edit_index"] = frame.groupby(["text_id", "system", "editor"], sort=False).cumcount()
    return frame[list(EDIT_COLUMNS)].reset_index(drop=True)
