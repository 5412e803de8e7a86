"""The one reader of users' tables: files in, text cells out, roles guessed, values parsed.

Every upload (judgments, cost studies, revision drafts and edits) goes through here, so they all
accept the same files (delimiter and encoding detected), refuse the same broken ones, guess
columns the same way and name rows as the user's spreadsheet shows them: the header is row 0 and
the first data row is row 1, also after blank lines and filters. Problems raise
:class:`lib.errors.FormatError` naming the file, rows and column.
"""

from __future__ import annotations

import codecs
import csv
import io
import os
import re
import stat
import warnings
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from lib.errors import FormatError

if TYPE_CHECKING:
    import pandas as pd  # imported on use: the command line's parser reads lib.judgments.formats without pandas

_SAVE_AS_UTF8 = "save it as UTF-8 (CSV UTF-8 in spreadsheet programs)"

MAX_FILE_BYTES = 1 << 30
"""Largest file read (1 GiB). The app's uploads are capped lower (50 MB, ``server.maxUploadSize``);
the command line reads arenas of millions of votes (2,000,000 votes are about 90 MB of CSV), and a
table holds several times its file size in memory, so a larger file is refused before it is read."""

MAX_NAME_CHARS = 1_000
"""Longest name or id read from a file (systems, prompts, annotators, participants, ... and column
names). Names reach every output, figure and message; a 1 MB system name took 79 s and was written
into every output (issue 17). Free text (prompt texts, responses, drafts) is not a name."""


def read_bytes(source: Any, name: str) -> bytes:
    """The bytes of a path, a bytes object or a binary file-like (e.g. Streamlit's UploadedFile).

    A path must name a regular file: a folder, a FIFO or a device (``/dev/zero``) is refused
    without being opened, so reading never blocks or runs forever; at most ``MAX_FILE_BYTES`` are read.

    Raises
    ------
    FormatError
        No such file, a folder or another thing that is not a regular file, a file larger than
        ``MAX_FILE_BYTES``, or a file that cannot be read.
    """
    if isinstance(source, (str, Path)):
        try:
            mode = os.stat(source).st_mode
        except FileNotFoundError:
            raise FormatError("no such file", file=name) from None
        except OSError as err:
            raise FormatError(f"cannot read the file ({err.strerror})", file=name) from err
        if stat.S_ISDIR(mode):
            raise FormatError("this is a folder, not a file; give the path of a CSV file", file=name)
        if not stat.S_ISREG(mode):
            kind = (
                "a FIFO (named pipe)"
                if stat.S_ISFIFO(mode)
                else "a device"
                if (stat.S_ISCHR(mode) or stat.S_ISBLK(mode))
                else "a socket or special file"
            )
            raise FormatError(
                f"this is {kind}, not a regular file; save the data to a CSV file and give its path", file=name
            )
        try:
            with open(source, "rb") as fh:
                return _bounded(fh.read(MAX_FILE_BYTES + 1), name)
        except OSError as err:
            raise FormatError(f"cannot read the file ({err.strerror})", file=name) from err
    if isinstance(source, (bytes, bytearray, memoryview)):
        return _bounded(bytes(source), name)
    if hasattr(source, "seek"):
        source.seek(0)
    data = source.read(MAX_FILE_BYTES + 1)
    return _bounded(data.encode("utf-8") if isinstance(data, str) else data, name)


def _bounded(data: bytes, name: str) -> bytes:
    if len(data) > MAX_FILE_BYTES:
        raise FormatError(
            f"the file is larger than {MAX_FILE_BYTES >> 20:,} MB, the most this program reads", file=name
        )
    return data


def read_csv(source: Any, name: str) -> pd.DataFrame:
    """Read a CSV file as text columns, with clear errors for unusable files.

    Parameters
    ----------
    source : str, Path, bytes or binary file-like
        The file (a path, its bytes, or an object with ``read()`` such as Streamlit's UploadedFile).
    name : str
        File name used in error messages.

    Returns
    -------
    pandas.DataFrame
        Every column as ``str`` (empty cells are ""), so ids such as "007" keep their spelling.
        Column names are stripped of surrounding blanks. UTF-8 (with or without byte-order mark)
        and UTF-16 with a byte-order mark are decoded; the delimiter (``,`` ``;`` tab ``|``) is
        detected from the first lines; a trailing delimiter on data rows is ignored rather than
        shifting the columns. Blank lines are left out; the index is the 0-based data row
        (header = row 0 in messages), so :func:`row_numbers` names the rows of the file. A cell (or
        column name) the project's writer quoted against spreadsheet formulas is read as it was
        before (:func:`lib.io.export.unneutral`).

    Raises
    ------
    FormatError
        No such file, empty file, header without data rows, a column name used twice, bytes that
        are not UTF-8 (with byte offset and line), CSV that cannot be parsed (with the line), or data
        rows with more (non-empty) fields than the header (rows named).
    """
    from lib.io.export import unneutralise

    data = read_bytes(source, name)
    if not data.strip():
        raise FormatError("the file is empty", file=name)
    text = _decode(data, name)
    sep = _delimiter(text)
    try:
        fields = next(csv.reader(io.StringIO(text, newline=""), delimiter=sep), [])
    except csv.Error as err:  # e.g. a header cell over the csv module's 128 KiB field limit
        raise FormatError(
            f"cannot read the header ({err}); a column name may have at most {MAX_NAME_CHARS:,} characters",
            file=name,
            rows=[0],
        ) from None
    header = [h.strip() for h in fields]
    check_names(
        np.array(header, dtype=object), np.zeros(len(header), dtype=int), what="column name", column=None, file=name
    )
    repeated = sorted({h for h in header if h and header.count(h) > 1})
    if repeated:  # pandas would silently rename the second one to "name.1"
        raise FormatError(
            f"column name{'s' if len(repeated) > 1 else ''} "
            f"{', '.join(repr(h) for h in repeated)} appear{'' if len(repeated) > 1 else 's'} "
            "more than once in the header; give every column its own name",
            file=name,
            rows=[0],
            column=repeated[0],
        )
    df = _parse_regular(text, sep, fields)
    if df is None:
        df = _parse(text, sep, len(header), name)
    df.columns = [str(c).strip() for c in df.columns]
    unneutralise(df)  # the quote lib.io.export put before formula-like cells: a file we wrote reads back as written
    # Blank lines hold no data; dropping them keeps the index = data row - 1 for error messages.
    blank = _blank_rows(df)
    if blank.any():
        df = df[~blank]
    if df.empty:
        raise FormatError("the file has a header but no data rows", file=name)
    return df


def _blank_rows(df: pd.DataFrame) -> np.ndarray:
    """(n,) bool: the rows whose every cell is blank (or holds only blanks). A column is stripped only in the rows
    blank so far: most files' first column has a value in every row, and the others are not looked at."""
    blank = np.ones(len(df), dtype=bool)
    for col in df.columns:
        cells = df[col] if blank.all() else df[col][blank]
        blank[blank] = (cells.str.strip() == "").to_numpy(dtype=bool)
        if not blank.any():
            break
    return blank


def _parse(text: str, sep: str, width: int, name: str) -> pd.DataFrame:
    """``text`` by pandas' parser: the cells of every row as text, a short row's missing cells NaN, a trailing
    delimiter ignored (``width``: the header's fields).

    Raises
    ------
    FormatError
        Text that cannot be parsed (with its line), or rows with more (non-empty) fields than the header.
    """
    import pandas as pd

    try:
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always", pd.errors.ParserWarning)
            df = pd.read_csv(
                io.StringIO(text), dtype=str, keep_default_na=False, skip_blank_lines=False, sep=sep, index_col=False
            )
    except pd.errors.EmptyDataError:
        raise FormatError("the file is empty", file=name) from None
    except (pd.errors.ParserError, ValueError) as err:
        found = re.search(r"line (\d+)", str(err))
        rows = [int(found.group(1)) - 1] if found else None  # pandas counts the header as line 1
        raise FormatError(f"cannot parse as CSV ({err})", file=name, rows=rows) from None
    if any(issubclass(w.category, pd.errors.ParserWarning) for w in said):
        _refuse_long_rows(text, sep, width, name)  # pandas dropped fields past the header's
    return df


def _quoted_cells(sep: str) -> re.Pattern:
    """CSV text whose every quote is part of a quoted cell (RFC 4180: a cell quoted whole, a quote inside it
    doubled), cells split by ``sep``, lines ended by CRLF, CR or LF; possessive, so it never backtracks."""
    s = re.escape(sep)
    cell = rf'(?:"(?:[^"]|"")*+"|[^"{s}\r\n]*+)'
    row = rf"{cell}(?:{s}{cell})*+"
    return re.compile(rf"(?:{row}(?:\r\n|\r|\n))*+{row}")


def _parse_regular(text: str, sep: str, fields: list[str]) -> pd.DataFrame | None:
    """``text`` by pyarrow's CSV parser, about ten times faster than pandas' (an arena's 500,000 votes: 0.1 s
    against 2 s), where every row has the header's ``fields`` (named, each once): the same table as
    :func:`_parse`'s (tests/test_tables.py checks both on any text); None for any other text, which
    :func:`_parse` then reads or refuses with its messages (a short or long row, a trailing delimiter, a
    header cell left blank)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    if not all(f.strip() for f in fields) or len(set(fields)) < len(fields):
        return None
    if '"' in text and not _quoted_cells(sep).fullmatch(text):
        return None  # a quote left open (pyarrow closes it at the end, pandas refuses) or inside a cell
    try:
        table = pacsv.read_csv(
            io.BytesIO(text.encode("utf-8")),
            # one thread: on 2 cores, shared, pyarrow's threads took 0.05-0.5 s for an arena's 500,000 votes, one 0.03 s
            read_options=pacsv.ReadOptions(use_threads=False),
            parse_options=pacsv.ParseOptions(delimiter=sep, newlines_in_values=True, ignore_empty_lines=False),
            convert_options=pacsv.ConvertOptions(
                column_types=dict.fromkeys(fields, pa.string()),
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except pa.ArrowException:
        return None
    return table.to_pandas() if table.column_names == fields else None


def _refuse_long_rows(text: str, sep: str, width: int, name: str) -> None:
    """Refuse data rows with more fields than the header, unless the extra ones are empty (a trailing
    delimiter, which is read as no field); pandas would drop them with a warning of its own."""
    long_rows, first = [], None
    for row, fields in enumerate(csv.reader(io.StringIO(text, newline=""), delimiter=sep)):
        if row > 0 and len(fields) > width and any(f.strip() for f in fields[width:]):
            long_rows.append(row)
            first = first or fields
    if first is not None:
        last = next(f for f in reversed(first) if f.strip())
        raise FormatError(
            f"{len(first)} fields where the header has {width} (the last: {last[:50]!r}); quote a text that "
            f"holds the delimiter {sep!r}",
            file=name,
            rows=long_rows,
        )


def _decode(data: bytes, name: str) -> str:
    """UTF-16 when the file starts with its byte-order mark, else UTF-8 (byte-order mark optional)."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError as err:
            text, reason = "", f"{err.reason} at byte offset {err.start}"
        else:
            reason = "no line break"
        if "\n" not in text:  # a CSV with data has at least two lines
            raise FormatError(
                f"the file starts with a UTF-16 byte-order mark but is not UTF-16 CSV text ({reason}); {_SAVE_AS_UTF8}",
                file=name,
            ) from None
        return text
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        offset = err.start
        line = data[:offset].count(b"\n")  # 0 = header line
        raise FormatError(
            f"the file is not UTF-8 text: byte 0x{data[offset]:02x} at byte offset {offset} "
            f"(line {line + 1} of the file); {_SAVE_AS_UTF8}",
            file=name,
            rows=[line] if line > 0 else None,
        ) from None


def _delimiter(text: str) -> str:
    """The delimiter ``csv.Sniffer`` finds among , ; tab | in the first lines; "," if none is clear
    or if the one found does not split the header (a quoted text full of ";" must not win)."""
    lines = _first_lines(text, 20)
    try:
        sep = csv.Sniffer().sniff("\n".join(lines), delimiters=",;\t|").delimiter
    except csv.Error:
        return ","
    return sep if sep in lines[0] else ","


def _first_lines(text: str, n: int) -> list[str]:
    """``text.splitlines()[:n]``, split from the text's start alone when it holds them (an arena's file has
    500,000 lines)."""
    lines = text[: 2**16].splitlines()
    return lines[:n] if len(lines) > n else text.splitlines()[:n]  # the n-th line ends inside the start


# --------------------------------------------------------------------------------------- roles


def normalise(name: object) -> str:
    """A column or role name lower-cased with only letters and digits ("System A" = "system_a")."""
    return re.sub(r"[^0-9a-z]", "", str(name).lower())


@dataclass(frozen=True)
class ColumnRoles:
    """The roles a reader maps a file's columns onto, and the column names each is guessed from.

    Every reader (judgment formats ``FormatSpec.column_roles``, cost studies
    ``lib.cost.schema.STUDY_ROLES``, revision files ``lib.revision.io.column_roles``) describes its
    roles so, and :func:`guess_roles` guesses them all the same way.

    Attributes
    ----------
    roles : tuple of str
        Roles in order of priority (a column is given to the first role that names it).
    synonyms : mapping
        ``{role: names}``, best first; the role's own name is tried before them.
    text_roles : collection of str
        Roles that hold free text: a column whose non-blank values are all integers is not guessed
        for them (e.g. a question number named "question").
    optional_roles : collection of str
        Roles a file may leave out: a column with no value at all is not guessed for them (mapped by
        hand, its blanks are reported).
    """

    roles: tuple[str, ...]
    synonyms: Mapping[str, Sequence[str]]
    text_roles: Collection[str] = ()
    optional_roles: Collection[str] = ()


def guess_roles(columns: Sequence[str], roles: ColumnRoles, table: pd.DataFrame | None = None) -> dict[str, str]:
    """Guess which column plays each role from the column names (the one column guesser).

    Parameters
    ----------
    columns : sequence of str
        The file's column names.
    roles : ColumnRoles
        The reader's roles and their synonyms. Names are compared after :func:`normalise` (case,
        blanks and punctuation ignored).
    table : pandas.DataFrame, optional
        The file's rows, for the checks of ``roles.text_roles`` and ``roles.optional_roles``
        (without it they are not made).

    Returns
    -------
    dict
        ``{role: column}`` for the roles a column was found for, each column used at most once.
    """
    by_norm: dict[str, str] = {}
    for name in columns:
        by_norm.setdefault(normalise(name), name)
    used: set[str] = set()
    guess: dict[str, str] = {}
    for role in roles.roles:
        for synonym in (role, *roles.synonyms.get(role, ())):
            col = by_norm.get(normalise(synonym))
            if (
                col is None
                or col in used
                or (role in roles.optional_roles and _blank(table, col))
                or (role in roles.text_roles and _integers(table, col))
            ):
                continue
            guess[role] = col
            used.add(col)
            break
    return guess


def _blank(table: pd.DataFrame | None, column: str) -> bool:
    """True when ``table`` is given and has rows, and every value of ``column`` is blank."""
    if table is None or column not in table or len(table) == 0:
        return False
    # a column with values mostly shows one in its first rows: the whole column is stripped only when it does not
    return not (_stripped(table[column].iloc[:100]).ne("").any() or _stripped(table[column]).ne("").any())


def _integers(table: pd.DataFrame | None, column: str) -> bool:
    """True when ``table`` is given and every non-blank value of ``column`` is an integer."""
    if table is None or column not in table:
        return False
    values = _stripped(table[column])
    values = values[values != ""]
    return len(values) > 0 and bool(values.str.fullmatch(r"[+-]?\d+").all())


# --------------------------------------------------------------------------------------- combined columns

COMBINE = "+"
"""Joins column names into one combined column in a mapping (``prompt=story+test``, issue 16)."""

COMBINED_SEPARATOR = " + "
"""Joins the cells of a combined column ("s1" and "t2" give "s1 + t2")."""


def combined_name(columns: Sequence[str]) -> str:
    """The name that maps a role onto several columns combined: ``["story", "test"]`` -> ``"story+test"``."""
    return COMBINE.join(columns)


def combine_columns(df: pd.DataFrame, columns: Mapping[str, str] | None, *, file: str) -> pd.DataFrame:
    """Add the combined columns a mapping names (``{"prompt": "story+test"}``) to the table.

    A name that is a column of the file is that column, even with a ``+`` in it; another name with
    ``+`` is split into columns of the file, and each row's cells are joined by
    ``COMBINED_SEPARATOR``. A row with a blank in any part is blank in the combined column (so a
    required role reports it). E.g. a creativity test whose prompt is a story x test pair.

    Parameters
    ----------
    df : pandas.DataFrame
        The user's table (:func:`read_csv`).
    columns : mapping or None
        ``{role: column name}`` chosen by the user.
    file : str
        File name for messages.

    Returns
    -------
    pandas.DataFrame
        ``df`` with one more column per combined name (the same object when the mapping combines none).

    Raises
    ------
    FormatError
        A part that is not a column of the file, or two different combinations of cells that give the
        same combined text (a cell holding the separator), which would merge different prompts.
    """
    import pandas as pd

    wanted = {name for name in (columns or {}).values() if name and name not in df.columns and COMBINE in name}
    if not wanted:
        return df
    df = df.copy()
    for name in sorted(wanted):
        parts = [part.strip() for part in name.split(COMBINE)]
        unknown = [part for part in parts if part not in df.columns]
        if unknown or len(parts) < 2:
            raise FormatError(
                f"cannot combine '{name}': {', '.join(repr(u) for u in unknown) or 'one name'} "
                f"{'is' if len(unknown) < 2 else 'are'} not a column of the file; its columns are "
                f"{', '.join(map(str, df.columns))}",
                file=file,
                column=name,
            )
        cells = pd.DataFrame({part: text(df[part]) for part in parts}, index=df.index)
        joined = cells.agg(COMBINED_SEPARATOR.join, axis=1).where((cells != "").all(axis=1), "")
        distinct = cells.assign(_joined=joined).drop_duplicates()
        clash = joined.isin(distinct.loc[distinct.duplicated("_joined", keep=False), "_joined"])
        refuse(
            (clash & (joined != "")).to_numpy(),
            f"different cells give the same combined value; a cell holds '{COMBINED_SEPARATOR.strip()}'",
            row_numbers(df),
            name,
            file,
        )
        df[name] = joined
    return df


# --------------------------------------------------------------------------------------- cells


def text(series: pd.Series) -> np.ndarray:
    """A column as stripped strings; NaN (frames not read by :func:`read_csv`) becomes ""."""
    return _stripped(series).to_numpy(dtype=object)


def text_series(series: pd.Series) -> pd.Series:
    """:func:`text` as pandas' ``str`` (held by pyarrow), indexed by position (0 to n - 1): for readers that compare,
    factorize and keep whole columns, never turning each cell into a Python string (an arena's 500,000 votes: six
    columns as Python strings took 0.3 s, and as many again to turn them back into the votes' table)."""
    return _stripped(series).astype(str).reset_index(drop=True)


def _stripped(series: pd.Series) -> pd.Series:
    """:func:`text` as a text Series: a column :func:`read_csv` read (pandas' ``str``) is stripped where it is
    held, by pyarrow (an arena's column of 500,000 ids: 0.02 s, against 0.2 s through Python strings)."""
    import pandas as pd

    if isinstance(series.dtype, pd.StringDtype):
        return series.fillna("").str.strip()
    return series.astype(object).where(series.notna(), "").astype(str).str.strip()


def row_numbers(df: pd.DataFrame) -> np.ndarray:
    """1-based data rows of the file (header = row 0) from the index :func:`read_csv` set, so they
    stay right after blank lines and filters; positions for a frame with another index."""
    import pandas as pd

    integer_index = pd.api.types.is_integer_dtype(df.index.dtype)
    return (df.index.to_numpy() if integer_index else np.arange(len(df))) + 1


def refuse(bad: np.ndarray, problem: str, rows: np.ndarray, column: str | None, file: str) -> None:
    """Raise FormatError naming the ``rows`` where the boolean mask ``bad`` holds, if any does."""
    if bad.any():
        raise FormatError(problem, file=file, rows=rows[bad], column=column)


def check_names(cells: np.ndarray | pd.Series, rows: np.ndarray, *, what: str, column: str | None, file: str) -> None:
    """Refuse names or ids longer than ``MAX_NAME_CHARS`` characters.

    Parameters
    ----------
    cells : numpy.ndarray of str or pandas.Series of str, shape (n,)
        Text cells (:func:`text` or :func:`text_series`) of a column of names or ids (or the header's column names).
    rows : numpy.ndarray of int, shape (n,)
        The cells' row numbers (:func:`row_numbers`; 0 for the header), for the message.
    what, column, file : str
        What the values are ("system"), the file's column name (None for the header) and the file name.

    Raises
    ------
    FormatError
        A cell longer than ``MAX_NAME_CHARS`` (its length and first characters are quoted).
    """
    import pandas as pd

    if isinstance(cells, pd.Series):  # text_series: pyarrow counts the characters (code points, as len does)
        lengths = cells.str.len().to_numpy(dtype=np.int64)
    else:
        lengths = np.fromiter(map(len, cells), dtype=np.int64, count=len(cells))  # C's loop, not pandas' per cell
    long = lengths > MAX_NAME_CHARS
    if long.any():
        first = str(np.asarray(cells, dtype=object)[long][0])
        refuse(
            long,
            f"{what} of {int(lengths[long].max()):,} characters (starting {first[:40]!r}); a name or id "
            f"may have at most {MAX_NAME_CHARS:,} characters: is the right column mapped?",
            rows,
            column,
            file,
        )


def numbers(cells: np.ndarray, rows: np.ndarray, *, what: str, column: str, file: str) -> np.ndarray:
    """Parse text cells (:func:`text`) as finite numbers; blank cells become NaN.

    Parameters
    ----------
    cells : numpy.ndarray of str, shape (n,)
    rows : numpy.ndarray of int, shape (n,)
        The cells' row numbers (:func:`row_numbers`), for the message.
    what, column, file : str
        What the values are ("rank"), the file's column name and the file name, for the message.

    Returns
    -------
    numpy.ndarray of float, shape (n,)

    Raises
    ------
    FormatError
        A non-blank cell that is not a finite number (up to five such values are quoted).
    """
    import pandas as pd

    parsed = pd.to_numeric(pd.Series(cells, dtype=object).replace("", np.nan), errors="coerce").to_numpy(dtype=float)
    bad = (cells != "") & ~np.isfinite(parsed)
    shown = ", ".join(repr(v) for v in pd.unique(cells[bad])[:5])
    refuse(bad, f"{what} must be a number, found {shown}", rows, column, file)
    return parsed
