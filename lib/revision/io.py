"""Read drafts (CSV) and uploaded edits (JSON lines or CSV) with clear errors.

Both readers map the file's columns onto roles (:data:`DRAFT_REQUIRED`, :data:`EDIT_REQUIRED`,
...) with :func:`lib.io.columns.resolve_roles`: the user's ``{role: column}`` wins over the guesses of
:func:`lib.io.tables.guess_roles` (:func:`column_roles`). The page reads a file once with
:func:`read_table`, shows the mapping drop-downs, then builds the table with
:func:`drafts_from_table` or :func:`edits_from_table`.
Rows are named as in the file (:func:`lib.io.tables.row_numbers`): CSV data rows (header = row 0),
or the lines of a JSON lines file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

import pandas as pd

from lib.errors import FormatError
from lib.io import tables
from lib.io.columns import resolve_roles
from lib.revision.schema import EDIT_COLUMNS, EDIT_FIELDS, MAX_TEXT_CHARS

DRAFT_REQUIRED: tuple[str, ...] = ("text_id", "system", "draft")
DRAFT_OPTIONAL: tuple[str, ...] = ("reference",)
DRAFT_ROLES: tuple[str, ...] = (*DRAFT_REQUIRED, *DRAFT_OPTIONAL)
EDIT_REQUIRED: tuple[str, ...] = ("text_id", "system", "original_snippet", "revised_snippet")
EDIT_OPTIONAL: tuple[str, ...] = (
    "editor",
    "action_name",
    "revision_description",
    "revision_level",
    "revision_intention",
)
"""Only the draft and the two snippets are needed to locate and count an edit; the descriptive
fields of the schema are blank when a file has none."""
UPLOADED_EDITOR = "uploaded"

_SYNONYMS: dict[str, tuple[str, ...]] = {
    "text_id": ("id", "doc", "doc_id", "document", "document_id", "paragraph_id", "item", "item_id", "prompt_id"),
    "system": ("model", "model_name", "system_name", "generator"),
    "draft": ("text", "output", "generation", "response"),
    "reference": ("ref", "reference_text"),
    "editor": ("annotator", "writer", "reviser"),
    "original_snippet": ("original", "before", "old", "source_snippet"),
    "revised_snippet": ("revised", "after", "new", "replacement"),
    "action_name": ("action",),
    "revision_description": ("description",),
    "revision_level": ("level",),
    "revision_intention": ("intention", "category"),
}


def column_roles(roles: Sequence[str]) -> tables.ColumnRoles:
    """Revision roles (of drafts or edits) with the column names each is guessed from.

    Parameters
    ----------
    roles : sequence of str
        The roles, in order of priority (e.g. ``(*EDIT_REQUIRED, *EDIT_OPTIONAL)``).

    Returns
    -------
    lib.io.tables.ColumnRoles
        For :func:`lib.io.tables.guess_roles`, which ignores case, blanks and punctuation
        (``Model Name`` = ``model_name`` = ``ModelName``) and guesses a column for one role at most.
    """
    return tables.ColumnRoles(tuple(roles), _SYNONYMS)


def read_table(source: str | Path | IO[bytes], name: str | None = None) -> pd.DataFrame:
    """A CSV, or JSON lines (by extension ``.jsonl``/``.json``/``.ndjson`` or a leading ``{``), as read.

    CSV goes through :func:`lib.io.tables.read_csv` (encoding and delimiter detection, trailing
    delimiters, duplicate column names), like every other upload.

    Returns
    -------
    DataFrame
        The file's columns; CSV cells as str. The index is the file's data row - 1 (CSV) or line
        - 1 (JSON lines), so :func:`lib.io.tables.row_numbers` names the rows as the file has them.

    Raises
    ------
    FormatError
        Unreadable or not UTF-8, a JSON line that is not an object, or a file without data rows.
    """
    name = name or str(source)
    raw = tables.read_bytes(source, name)
    is_json = str(name).lower().endswith((".jsonl", ".json", ".ndjson"))
    if not is_json and not raw.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{"):
        return tables.read_csv(raw, name)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise FormatError(f"not UTF-8 text (byte {err.start})", file=name) from err
    records, lines = [], []
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
        lines.append(line_no - 1)
    frame = pd.DataFrame.from_records(records, index=lines)
    if frame.empty:
        raise FormatError("the file is empty", file=name)
    return frame


def _select(
    frame: pd.DataFrame,
    columns: Mapping[str, str] | None,
    required: Sequence[str],
    optional: Sequence[str],
    name: str,
    what: str,
) -> tuple[pd.DataFrame, dict[str, str]]:
    """The mapped columns renamed to their roles, and the mapping ``{role: file column}``."""
    file_columns = [str(c) for c in frame.columns]
    frame = frame.set_axis(file_columns, axis=1)
    guesses = tables.guess_roles(file_columns, column_roles([*required, *optional]))
    mapping = resolve_roles(file_columns, required, optional, guesses, columns, file=name, what=what)
    return pd.DataFrame({role: frame[col] for role, col in mapping.items()}), mapping


def _check_text(frame: pd.DataFrame, cols: Sequence[str], mapping: Mapping[str, str], name: str) -> None:
    """Cells must be text (not missing, not a JSON list or object) and at most MAX_TEXT_CHARS long."""
    rows = tables.row_numbers(frame)
    for col in cols:
        if col not in frame.columns:
            continue
        bad = frame[col].map(lambda v: not isinstance(v, (str, int, float)) or v != v).to_numpy()
        tables.refuse(bad, f"'{col}' is missing or not text", rows, mapping[col], name)
        long = (frame[col].astype(str).str.len() > MAX_TEXT_CHARS).to_numpy()
        if long.any():
            k = long.nonzero()[0][0]
            raise FormatError(
                f"{col} of text_id '{frame['text_id'].iloc[k]}' is {len(str(frame[col].iloc[k])):,} characters "
                f"long; at most {MAX_TEXT_CHARS:,} are accepted (split the text)",
                file=name,
                rows=rows[long],
                column=mapping[col],
            )


def drafts_from_table(
    frame: pd.DataFrame, name: str, *, columns: Mapping[str, str] | None = None, need_reference: bool = False
) -> pd.DataFrame:
    """Drafts from a table read by :func:`read_table`; see :func:`read_drafts`."""
    required = (*DRAFT_REQUIRED, "reference") if need_reference else DRAFT_REQUIRED
    optional = () if need_reference else DRAFT_OPTIONAL
    frame, mapping = _select(frame, columns, required, optional, name, "the drafts file")
    _check_text(frame, DRAFT_ROLES, mapping, name)
    frame = frame.astype(str)
    rows = tables.row_numbers(frame)
    for col in required:
        tables.refuse((frame[col].str.strip() == "").to_numpy(), f"empty {col}", rows, mapping[col], name)
    dup = frame.duplicated(["text_id", "system"], keep="first").to_numpy()
    tables.refuse(dup, "the same (text_id, system) appears more than once", rows, None, name)
    return frame.reset_index(drop=True)


def read_drafts(
    source: str | Path | IO[bytes],
    name: str | None = None,
    *,
    columns: Mapping[str, str] | None = None,
    need_reference: bool = False,
) -> pd.DataFrame:
    """Drafts CSV with columns ``text_id, system, draft`` and optionally ``reference``.

    Parameters
    ----------
    source : path or binary file
    name : str, optional
        File name used in error messages (default: the path).
    columns : mapping, optional
        ``{role: file_column}`` for files whose column names differ (``--columns``); roles left out
        are guessed by name (:func:`column_roles`), ``""`` unsets a role.
    need_reference : bool
        Require a non-empty ``reference`` in every row (diff-based engine).

    Returns
    -------
    DataFrame
        ``text_id, system, draft`` (str) and ``reference`` (str) when mapped.

    Raises
    ------
    FormatError
        Unparsable file, no data rows, missing column, empty draft or reference, a text longer than
        :data:`~lib.revision.schema.MAX_TEXT_CHARS`, duplicate (text_id, system).
    """
    name = name or str(source)
    return drafts_from_table(read_table(source, name), name, columns=columns, need_reference=need_reference)


def edits_from_table(frame: pd.DataFrame, name: str, *, columns: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Edits from a table read by :func:`read_table`; see :func:`read_edits`."""
    frame, mapping = _select(frame, columns, EDIT_REQUIRED, EDIT_OPTIONAL, name, "an edits file")
    _check_text(frame, ("text_id", "system", "editor", *EDIT_FIELDS), mapping, name)
    frame = frame.astype(str)
    if "editor" not in frame.columns:
        frame["editor"] = UPLOADED_EDITOR
    for col in EDIT_FIELDS:
        frame[col] = frame.get(col, "")
    frame["edit_index"] = frame.groupby(["text_id", "system", "editor"], sort=False).cumcount()
    return frame[list(EDIT_COLUMNS)].reset_index(drop=True)


def read_edits(
    source: str | Path | IO[bytes], name: str | None = None, *, columns: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """Edits from another tool: JSON lines (one edit per line) or CSV.

    Required per edit: :data:`EDIT_REQUIRED` (``text_id, system, original_snippet,
    revised_snippet``); optional :data:`EDIT_OPTIONAL`: ``editor`` (default ``uploaded``) and the
    descriptive schema fields (blank when absent). ``edit_index`` is the order within each
    (text_id, system, editor). An empty ``revised_snippet`` is a deletion. Other fields (e.g.
    ``located``) are ignored: edits are located again against the drafts.

    Parameters
    ----------
    columns : mapping, optional
        ``{role: file_column}``; roles left out are guessed by name, ``""`` unsets a role.

    Returns
    -------
    DataFrame
        :data:`~lib.revision.schema.EDIT_COLUMNS`, all text as str.

    Raises
    ------
    FormatError
        A line that is not a JSON object, no edits, a missing field, a non-text value, or a snippet
        longer than :data:`~lib.revision.schema.MAX_TEXT_CHARS`.
    """
    name = name or str(source)
    return edits_from_table(read_table(source, name), name, columns=columns)
