"""Readers that turn a user's judgment CSV into canonical tables, with precise validation.

Formats (issue 2, "Judgment formats"; issue 3, "Ratings as input"):

- ``pairwise``: one row per A/B/tie vote;
- ``bestworst``: per trial the systems shown and which one was MOST and LEAST (best-worst scaling,
  as in the "Counterfactual AI Writing Study" form); the best beats every other shown system and
  every other shown system beats the worst;
- ``ranking``: a rank per system per trial (lower rank = better); every pair of systems in a trial
  is ordered by rank and equal ranks are ties;
- ``responses``: classic item-response data ``person, item, score`` (ordered integer scores);
- ``ratings``: absolute scores of several systems on the same prompts, averaged over annotators.

The three judgment formats become one table of pairwise votes (``VOTE_COLUMNS``). Columns of the
user's file are mapped onto *roles* (``ROLES``); :func:`guess_columns` proposes a mapping and
:func:`resolve_columns` applies the user's choices over it. Every problem raises
:class:`lib.errors.FormatError` naming the file, the 1-based data rows (header = row 0), the column
and what is wrong; no row is ever dropped silently.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from lib.columns import resolve_roles
from lib.errors import FormatError, SettingsError

FORMATS = ("pairwise", "bestworst", "ranking", "responses", "ratings")
JUDGMENT_FORMATS = ("pairwise", "bestworst", "ranking")

ROLES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "pairwise": (
        ("prompt", "system_a", "system_b", "annotator", "choice"),
        ("criterion", "prompt_text", "response_a", "response_b"),
    ),
    "bestworst": (
        ("prompt", "annotator", "system", "judgment"),
        ("trial", "criterion", "prompt_text", "response"),
    ),
    "ranking": (
        ("prompt", "annotator", "system", "rank"),
        ("trial", "criterion", "prompt_text", "response"),
    ),
    "responses": (("person", "item", "score"), ()),
    "ratings": (("prompt", "system", "score"), ("annotator", "criterion", "prompt_text", "response")),
}

NOT_BLANK: dict[str, tuple[str, ...]] = {
    "pairwise": ("prompt", "system_a", "system_b", "annotator", "choice", "criterion"),
    "bestworst": ("prompt", "annotator", "system", "criterion", "trial"),  # a blank judgment = middle
    "ranking": ("prompt", "annotator", "system", "rank", "criterion", "trial"),
    "responses": ("person", "item", "score"),
    "ratings": ("prompt", "system", "score", "annotator", "criterion"),
}
"""Roles whose cells must not be blank (when mapped): a blank is an error, or the row is dropped
by :func:`drop_incomplete` when the user asks for it."""

VOTE_COLUMNS = ["prompt_id", "system_a", "system_b", "annotator_id", "winner", "criterion"]
DEFAULT_CRITERION = "overall"
_ROW = "_row"  # key of the row numbers in the role -> values dict

# Column names each role is guessed from, best first; compared after lower-casing and removing
# everything but letters and digits ("System A" == "system_a" == "systema").
_SYNONYMS: dict[str, tuple[str, ...]] = {
    "prompt": (
        "prompt", "prompt_id", "item", "item_id", "case", "case_id", "instruction_id", "prompt_idx",
        "question_id", "example_id", "sample_id", "input_id", "task_id", "doc_id", "id",
    ),
    "system_a": ("system_a", "model_a", "system1", "model1", "a_system", "a_model", "left_system", "left_model"),
    "system_b": ("system_b", "model_b", "system2", "model2", "b_system", "b_model", "right_system", "right_model"),
    "annotator": (
        "annotator", "annotator_id", "rater", "rater_id", "worker", "worker_id", "participant",
        "participant_id", "writer", "judge", "judge_id", "evaluator", "labeler", "coder", "user", "user_id",
    ),
    "choice": ("choice", "winner", "preference", "preferred", "label", "vote", "decision", "better", "judgment"),
    "judgment": ("judgment", "judgement", "best_worst", "bestworst", "bws", "most_least", "choice", "label", "selection"),
    "system": ("system", "model", "condition", "system_id", "system_name", "model_id", "model_name", "generator", "method"),
    "rank": ("rank", "ranking", "position", "place"),
    "trial": ("trial", "trial_id", "page", "screen", "hit", "hit_id", "task"),
    "criterion": ("criterion", "criteria", "aspect", "dimension", "metric", "attribute", "question_type"),
    "prompt_text": ("prompt_text", "instruction", "prompt_str", "question", "counterfactual", "context", "source_text"),
    "response": ("response", "response_text", "output", "completion", "generation", "passage", "story", "text"),
    "response_a": ("response_a", "output_a", "response1", "output1", "completion_a", "text_a"),
    "response_b": ("response_b", "output_b", "response2", "output2", "completion_b", "text_b"),
    "person": ("person", "person_id", "respondent", "subject", "examinee", "student", "participant", "user", "id"),
    "item": ("item", "item_id", "question", "question_id", "variable"),
    "score": (
        "score", "rating", "mean_score", "mean_human_score", "human_score", "value", "grade", "likert",
        "response", "points",
    ),
}

_CHOICE_CODES = {
    "a": "a", "1": "a", "model_a": "a", "system_a": "a",
    "b": "b", "2": "b", "model_b": "b", "system_b": "b",
    "tie": "tie", "draw": "tie", "equal": "tie", "=": "tie", "0": "tie", "tie (bothbad)": "tie",
}
_CHOICE_ALLOWED = (
    "A, B, tie (also draw, equal, =), 1, 2, 0 (1 = A, 2 = B, 0 = tie), model_a / model_b / "
    "tie (bothbad) as in Chatbot Arena and MT-bench, or the row's system_a / system_b name"
)
_JUDGMENT_CODES = {
    "most": "most", "best": "most", "1": "most", "+1": "most",
    "least": "least", "worst": "least", "-1": "least",
    "middle": "middle", "": "middle", "0": "middle",
}
_JUDGMENT_ALLOWED = "most / best / 1, least / worst / -1, middle / 0 / blank (any case)"


@dataclass
class Judgments:
    """Canonical pairwise votes with the texts that travel with them.

    Attributes
    ----------
    votes : pandas.DataFrame
        Columns ``VOTE_COLUMNS``, all ``str``; ``winner`` in {"a", "b", "tie"}; one row per vote,
        ``system_a`` / ``system_b`` as the pair appears in the file.
    prompt_texts : pandas.DataFrame
        ``prompt_id, prompt_text`` (one row per prompt with a text; may be empty).
    responses : pandas.DataFrame
        ``prompt_id, system, response`` (one row per prompt and system with a text; may be empty).
    source : str
        Name of the file the votes came from.
    """

    votes: pd.DataFrame
    prompt_texts: pd.DataFrame
    responses: pd.DataFrame
    source: str


# --------------------------------------------------------------------------------------- reading


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
        (header = row 0 in messages), so the readers' error messages name the rows of the file.

    Raises
    ------
    FormatError
        No such file, empty file, header without data rows, bytes that are not UTF-8 (with byte offset and line),
        or CSV that cannot be parsed (with the line).
    """
    if isinstance(source, (str, Path)):
        if not Path(source).is_file():
            raise FormatError("no such file", file=name)
        data = Path(source).read_bytes()
    elif isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
    else:
        if hasattr(source, "seek"):
            source.seek(0)
        data = source.read()
    if not data.strip():
        raise FormatError("the file is empty", file=name)
    text = _decode(data, name)
    sep = _delimiter(text)
    header = [h.strip() for h in next(csv.reader(io.StringIO(text), delimiter=sep), [])]
    repeated = sorted({h for h in header if h and header.count(h) > 1})
    if repeated:  # pandas would silently rename the second one to "name.1"
        raise FormatError(f"column name{'s' if len(repeated) > 1 else ''} "
                          f"{', '.join(repr(h) for h in repeated)} appear{'' if len(repeated) > 1 else 's'} "
                          "more than once in the header; give every column its own name",
                          file=name, rows=[0], column=repeated[0])
    try:
        df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, skip_blank_lines=False,
                         sep=sep, index_col=False)
    except pd.errors.EmptyDataError:
        raise FormatError("the file is empty", file=name) from None
    except (pd.errors.ParserError, ValueError) as err:
        found = re.search(r"line (\d+)", str(err))
        rows = [int(found.group(1)) - 1] if found else None  # pandas counts the header as line 1
        raise FormatError(f"cannot parse as CSV ({err})", file=name, rows=rows) from None
    df.columns = [str(c).strip() for c in df.columns]
    # Blank lines hold no data; dropping them keeps the index = data row - 1 for error messages.
    df = df[~df.apply(lambda col: col.str.strip() == "").all(axis=1)]
    if df.empty:
        raise FormatError("the file has a header but no data rows", file=name)
    return df


_SAVE_AS_UTF8 = "save it as UTF-8 (CSV UTF-8 in spreadsheet programs)"


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
            raise FormatError(f"the file starts with a UTF-16 byte-order mark but is not UTF-16 CSV text "
                              f"({reason}); {_SAVE_AS_UTF8}", file=name) from None
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
    head = "\n".join(text.splitlines()[:20])
    try:
        sep = csv.Sniffer().sniff(head, delimiters=",;\t|").delimiter
    except csv.Error:
        return ","
    return sep if sep in text.splitlines()[0] else ","


# --------------------------------------------------------------------------------------- columns


def _norm(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", str(name).lower())


_TEXT_ROLES = ("prompt_text", "response", "response_a", "response_b")


def guess_columns(columns: Sequence[str], fmt: str, table: pd.DataFrame | None = None) -> dict[str, str]:
    """Guess which column plays each role of a format.

    Parameters
    ----------
    columns : sequence of str
        The file's column names.
    fmt : str
        One of ``FORMATS``.
    table : pandas.DataFrame, optional
        The file's rows: a column whose values are all integers is not guessed for a text role
        (prompt_text, response, response_a, response_b), e.g. a question number named "question".

    Returns
    -------
    dict
        ``{role: column}`` for the roles a column was found for (required roles first, each column
        used at most once). Names are compared case- and punctuation-insensitively against the role
        name and its synonyms (e.g. winner/choice/preference/label; item/prompt_id/case;
        annotator/rater/worker/participant/writer; system/model/condition).
    """
    _check_format(fmt)
    required, optional = ROLES[fmt]
    by_norm: dict[str, str] = {}
    for col in columns:
        by_norm.setdefault(_norm(col), col)
    used: set[str] = set()
    guess: dict[str, str] = {}
    for role in required + optional:
        for synonym in (role, *_SYNONYMS.get(role, ())):
            col = by_norm.get(_norm(synonym))
            if col is None or col in used or (role in _TEXT_ROLES and _integers(table, col)):
                continue
            guess[role] = col
            used.add(col)
            break
    return guess


def _integers(table: pd.DataFrame | None, column: str) -> bool:
    """True when ``table`` is given and every non-blank value of ``column`` is an integer."""
    if table is None or column not in table:
        return False
    values = table[column].astype(str).str.strip()
    values = values[values != ""]
    return len(values) > 0 and bool(values.str.fullmatch(r"[+-]?\d+").all())


def guess_format(columns: Sequence[str]) -> str | None:
    """The format whose required roles can all be guessed from the column names, or None.

    When several fit, the one with more required roles wins (pairwise before best-worst before
    ratings), then the one with more roles guessed, then the order of ``FORMATS`` (a file with
    both MOST/LEAST picks and ranks, such as ROME's, is read as best-worst).

    Parameters
    ----------
    columns : sequence of str
        The file's column names.

    Returns
    -------
    str or None
        One of ``FORMATS``; None when no format's required roles are all recognised by name.
    """
    fits = {}
    for fmt in FORMATS:
        guess = guess_columns(columns, fmt)
        if set(ROLES[fmt][0]) <= set(guess):
            fits[fmt] = (len(ROLES[fmt][0]), len(guess))
    return max(fits, key=fits.get) if fits else None


def resolve_columns(
    df: pd.DataFrame, fmt: str, columns: dict[str, str] | None, *, file: str
) -> dict[str, str]:
    """The user's ``{role: column}`` mapping over the guesses for ``fmt``, checked against the file.

    See :func:`lib.columns.resolve_roles` (an empty column name unsets a role).

    Raises
    ------
    FormatError
        Unknown format or role, a mapped column not in the file, a required role without column.
    """
    _check_format(fmt)
    required, optional = ROLES[fmt]
    return resolve_roles(list(df.columns), required, optional, guess_columns(list(df.columns), fmt, df),
                         columns, file=file, what=f"the {fmt} format")


# --------------------------------------------------------------------------------------- rows
# Each keeps the index read_csv set, so messages about the rows left still name the file's rows.


def filter_rows(df: pd.DataFrame, column: str, values: Sequence[str], *, file: str) -> pd.DataFrame:
    """The rows whose ``column`` holds one of ``values`` (e.g. ``level`` in {"turn"}).

    Parameters
    ----------
    df : pandas.DataFrame
        The user's table (:func:`read_csv`).
    column : str
        A column of the file, by its own name.
    values : sequence of str
        Values to keep, compared after stripping blanks.
    file : str
        File name for messages.

    Returns
    -------
    pandas.DataFrame
        The kept rows, with the file's row numbers as index.

    Raises
    ------
    FormatError
        ``column`` is not in the file.
    SettingsError
        No value given, or a value that does not occur in the column (the known values are named).
    """
    if column not in df.columns:
        raise FormatError(f"column '{column}' is not in the file; its columns are {', '.join(map(str, df.columns))}",
                          file=file, column=column)
    if not len(values):
        raise SettingsError(f"choose at least one value of column '{column}' to keep")
    cells = pd.Series(_text(df[column]), index=df.index)
    known = sorted(cells.unique())
    for value in values:
        if value not in known:
            raise SettingsError(f"'{value}' is not a value of column '{column}' in {file}; its values are "
                                f"{', '.join(known[:20])}{' ...' if len(known) > 20 else ''}")
    return df[cells.isin(list(values))]


def criterion_rows(df: pd.DataFrame, mapping: dict[str, str], criterion: str | None, *, file: str) -> pd.DataFrame:
    """The rows of one criterion, selected before any check for blank cells.

    Rows with a blank criterion are kept (they belong to no known criterion, so the readers report
    them). Without a criterion role, or with ``criterion`` None, ``df`` is returned unchanged (the
    readers then ask for a criterion when the file holds several).

    Raises
    ------
    SettingsError
        ``criterion`` does not occur in the criterion column (the known criteria are named).
    """
    if criterion is None or not mapping.get("criterion"):
        return df
    cells = pd.Series(_text(df[mapping["criterion"]]), index=df.index)
    known = sorted(set(cells) - {""})
    if criterion not in known:
        raise SettingsError(f"unknown criterion '{criterion}'; the data has: {', '.join(known)}")
    return df[cells.isin([criterion, ""])]


def drop_incomplete(df: pd.DataFrame, fmt: str, mapping: dict[str, str], *, file: str) -> tuple[pd.DataFrame, list[int]]:
    """Leave out the rows with a blank cell in a role that must not be blank (``NOT_BLANK``).

    Returns
    -------
    (table, dropped)
        The complete rows, and the file's 1-based data row numbers of the rows left out (for the
        caller to report: nothing is dropped silently).

    Raises
    ------
    FormatError
        Every row has a blank, so nothing would be left.
    """
    cols = [mapping[r] for r in NOT_BLANK[fmt] if mapping.get(r)]
    blank = np.zeros(len(df), dtype=bool)
    for col in cols:
        blank |= _text(df[col]) == ""
    if blank.all():
        raise FormatError(f"every row has a blank in one of the columns {', '.join(cols)}; nothing is left to analyse",
                          file=file)
    return df[~blank], [int(r) for r in _row_numbers(df)[blank]]


# --------------------------------------------------------------------------------------- helpers


def _check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        raise FormatError(f"unknown format '{fmt}'; choose one of {', '.join(FORMATS)}")


def _text(series: pd.Series) -> np.ndarray:
    """Column as stripped strings; NaN (frames not read by read_csv) becomes ""."""
    return series.astype(object).where(series.notna(), "").astype(str).str.strip().to_numpy(dtype=object)


def _rows(values: dict[str, np.ndarray], which: np.ndarray) -> list[int]:
    """1-based data rows of the file for a boolean mask or positions (see ``_take``)."""
    return [int(r) for r in values[_ROW][which]]


def _take(df: pd.DataFrame, mapping: dict[str, str], roles: Sequence[str], file: str) -> dict[str, np.ndarray]:
    """Text of the mapped roles (and, under ``_ROW``, each row's 1-based data row in the file).

    Row numbers come from the index that :func:`read_csv` set, so they stay right when the caller
    filtered rows (e.g. one criterion); other indexes count positions. A blank cell in any of
    ``roles`` is an error.
    """
    values = {role: _text(df[col]) for role, col in mapping.items()}
    values[_ROW] = _row_numbers(df)
    for role in roles:
        if role in values:
            blank = values[role] == ""
            if blank.any():
                raise FormatError(f"missing value for role '{role}'", file=file, rows=_rows(values, blank), column=mapping[role])
    return values


def _row_numbers(df: pd.DataFrame) -> np.ndarray:
    """1-based data rows of the file: from the index :func:`read_csv` set, else positions."""
    integer_index = pd.api.types.is_integer_dtype(df.index.dtype)
    return (df.index.to_numpy() if integer_index else np.arange(len(df))) + 1


def _numbers(values: dict[str, np.ndarray], role: str, column: str, file: str) -> np.ndarray:
    text = values[role]
    parsed = pd.to_numeric(pd.Series(text), errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(parsed)
    if bad.any():
        shown = ", ".join(repr(v) for v in pd.unique(text[bad])[:5])
        raise FormatError(f"{role} must be a number, found {shown}", file=file, rows=_rows(values, bad), column=column)
    return parsed


def _criteria(values: dict[str, np.ndarray], n: int) -> np.ndarray:
    return values["criterion"] if "criterion" in values else np.full(n, DEFAULT_CRITERION, dtype=object)


def _at_least_two_systems(systems: np.ndarray, column: str, file: str) -> None:
    distinct = pd.unique(systems)
    if len(distinct) < 2:
        raise FormatError(
            f"only one system ('{distinct[0]}') in the file; comparisons need at least two",
            file=file,
            column=column,
        )


def _texts(
    prompts: np.ndarray, prompt_text: np.ndarray | None, pairs: list[tuple[np.ndarray, np.ndarray]]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """First non-empty prompt text per prompt and response per (prompt, system)."""
    pt = pd.DataFrame({"prompt_id": prompts, "prompt_text": prompt_text if prompt_text is not None else ""})
    pt = pt[pt.prompt_text != ""].drop_duplicates("prompt_id").reset_index(drop=True)
    frames = [pd.DataFrame({"prompt_id": prompts, "system": s, "response": r}) for s, r in pairs]
    rs = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["prompt_id", "system", "response"])
    rs = rs[rs.response != ""].drop_duplicates(["prompt_id", "system"]).reset_index(drop=True)
    return pt.astype(str), rs.astype(str)


def _votes_frame(records: list[tuple[str, str, str, str, str, str]]) -> pd.DataFrame:
    return pd.DataFrame(records, columns=VOTE_COLUMNS, dtype=str)


# --------------------------------------------------------------------------------------- formats


def read_judgments(
    df: pd.DataFrame, fmt: str, columns: dict[str, str] | None = None, *, file: str
) -> Judgments:
    """Convert a pairwise, best-worst or ranking table into canonical pairwise votes.

    Parameters
    ----------
    df : pandas.DataFrame
        The user's table (as read by :func:`read_csv`), one row per vote (pairwise) or per system
        shown in a trial (best-worst, ranking).
    fmt : {"pairwise", "bestworst", "ranking"}
    columns : dict, optional
        ``{role: column}`` over the guesses (see ``ROLES``).
    file : str
        File name for error messages.

    Returns
    -------
    Judgments
        ``votes`` has one row per vote. Pairwise: one per row; the choice may be A/B/tie (any case;
        draw, equal, = for tie), 1/2/0, model_a/model_b/tie (bothbad), or a system name of that
        row (codes win over system names; exact names over names differing in case). Best-worst: a trial is (annotator, prompt, criterion[, trial column]);
        MOST beats every other shown system and every other beats LEAST, so a trial of n systems
        gives 2n - 3 votes (3 for n = 3; pairs of two middle systems are unknown). Ranking: every
        pair in a trial, lower rank wins, equal ranks tie: n(n - 1)/2 votes. Within a trial pairs
        are emitted in row order (``system_a`` = the earlier row).

    Raises
    ------
    FormatError
        Missing columns or values, unknown choice or judgment values, a system compared with
        itself or listed twice in a trial, a trial without exactly one MOST and one LEAST, a trial
        with one system, non-numeric ranks, a single system overall, duplicated pairwise votes
        (same prompt, system pair, annotator and criterion).
    """
    if fmt not in JUDGMENT_FORMATS:
        raise FormatError(f"'{fmt}' is not a judgment format; choose one of {', '.join(JUDGMENT_FORMATS)}", file=file)
    mapping = resolve_columns(df, fmt, columns, file=file)
    values = _take(df, mapping, NOT_BLANK[fmt], file)
    if fmt == "pairwise":
        return _pairwise(values, mapping, file)
    return _trials(values, mapping, fmt, file)


def _pairwise(values: dict[str, np.ndarray], mapping: dict[str, str], file: str) -> Judgments:
    sa, sb = values["system_a"], values["system_b"]
    _at_least_two_systems(np.concatenate([sa, sb]), mapping["system_b"], file)
    same = sa == sb
    if same.any():
        raise FormatError("a system is compared with itself (system_a = system_b)", file=file, rows=_rows(values, same), column=mapping["system_b"])

    raw = values["choice"]
    winner = np.array([_CHOICE_CODES.get(c.lower(), "") for c in raw], dtype=object)
    for fold in (str, str.casefold):  # exact system names first, then ignoring case
        choice = np.array([fold(c) for c in raw], dtype=object)
        for code, names in (("a", sa), ("b", sb)):
            by_name = (winner == "") & (choice == np.array([fold(n) for n in names], dtype=object))
            winner[by_name] = code
    unknown = winner == ""
    if unknown.any():
        shown = ", ".join(repr(v) for v in pd.unique(raw[unknown])[:5])
        raise FormatError(f"unknown choice value {shown}; allowed: {_CHOICE_ALLOWED}", file=file, rows=_rows(values, unknown), column=mapping["choice"])

    criterion = _criteria(values, len(sa))
    low, high = np.minimum(sa, sb), np.maximum(sa, sb)
    key = pd.DataFrame({"p": values["prompt"], "l": low, "h": high, "r": values["annotator"], "c": criterion})
    dup = key.duplicated(keep=False).to_numpy()
    if dup.any():
        raise FormatError(
            "duplicated votes: the same annotator judged the same system pair on the same prompt and criterion more than once",
            file=file, rows=_rows(values, dup), column=mapping["annotator"],
        )
    votes = pd.DataFrame(
        {"prompt_id": values["prompt"], "system_a": sa, "system_b": sb, "annotator_id": values["annotator"], "winner": winner, "criterion": criterion},
        dtype=str,
    )
    pairs = [(sa, values[r]) for r in ("response_a",) if r in values] + [(sb, values[r]) for r in ("response_b",) if r in values]
    prompt_texts, responses = _texts(values["prompt"], values.get("prompt_text"), pairs)
    return Judgments(votes, prompt_texts, responses, file)


def _trials(values: dict[str, np.ndarray], mapping: dict[str, str], fmt: str, file: str) -> Judgments:
    system = values["system"]
    _at_least_two_systems(system, mapping["system"], file)
    n = len(system)
    if fmt == "bestworst":
        raw = values["judgment"]
        code = np.array([_JUDGMENT_CODES.get(v.lower(), "") for v in raw], dtype=object)
        unknown = code == ""
        if unknown.any():
            shown = ", ".join(repr(v) for v in pd.unique(raw[unknown])[:5])
            raise FormatError(f"unknown judgment value {shown}; allowed: {_JUDGMENT_ALLOWED}", file=file, rows=_rows(values, unknown), column=mapping["judgment"])
    else:
        rank = _numbers(values, "rank", mapping["rank"], file)

    criterion = _criteria(values, n)
    keys = {"annotator": values["annotator"], "prompt": values["prompt"], "criterion": criterion}
    if "trial" in values:
        keys["trial"] = values["trial"]
    groups = pd.DataFrame(keys).groupby(list(keys), sort=False).indices
    hint = "" if "trial" in values else "; if it was judged more than once, map a 'trial' column that tells the judgments apart"

    records: list[tuple[str, str, str, str, str, str]] = []
    for idx in groups.values():
        idx = np.sort(idx)
        first = idx[0]
        trial = f", trial '{values['trial'][first]}'" if "trial" in values else ""
        where = f"trial (annotator '{values['annotator'][first]}', prompt '{values['prompt'][first]}', criterion '{criterion[first]}'{trial})"
        shown = system[idx]
        if len(idx) < 2:
            raise FormatError(f"{where} shows only one system", file=file, rows=_rows(values, idx), column=mapping["system"])
        repeated = pd.Series(shown).duplicated(keep=False).to_numpy()
        if repeated.any():
            names = ", ".join(f"'{s}'" for s in pd.unique(shown[repeated]))
            raise FormatError(f"system {names} listed more than once in {where}{hint}", file=file, rows=_rows(values, idx[repeated]), column=mapping["system"])
        if fmt == "bestworst":
            c = code[idx]
            if (c == "most").sum() != 1 or (c == "least").sum() != 1:
                raise FormatError(
                    f"{where} needs exactly one MOST and one LEAST, found {(c == 'most').sum()} MOST and {(c == 'least').sum()} LEAST",
                    file=file, rows=_rows(values, idx), column=mapping["judgment"],
                )
            # Score most = 1, middle = 0, least = -1: pairs of two middle systems are unknown.
            score = np.select([c == "most", c == "least"], [1, -1], 0)
        else:
            score = -rank[idx]
        a_name, p, r = values["annotator"][first], values["prompt"][first], criterion[first]
        for i in range(len(idx)):
            for j in range(i + 1, len(idx)):
                if fmt == "bestworst" and score[i] == 0 and score[j] == 0:
                    continue
                winner = "a" if score[i] > score[j] else "b" if score[i] < score[j] else "tie"
                records.append((p, shown[i], shown[j], a_name, winner, r))
    votes = _votes_frame(records)
    pairs = [(system, values["response"])] if "response" in values else []
    prompt_texts, responses = _texts(values["prompt"], values.get("prompt_text"), pairs)
    return Judgments(votes, prompt_texts, responses, file)


def read_responses(df: pd.DataFrame, columns: dict[str, str] | None = None, *, file: str) -> pd.DataFrame:
    """Read classic item-response data (one row per person and item).

    Parameters
    ----------
    df : pandas.DataFrame
        The user's table with roles ``person, item, score``.
    columns : dict, optional
        ``{role: column}`` over the guesses.
    file : str
        File name for error messages.

    Returns
    -------
    pandas.DataFrame
        ``person`` (str), ``item`` (str), ``score`` (int64, ordered categories), one row per input row.

    Raises
    ------
    FormatError
        Missing columns or values, non-integer scores, a person answering an item twice, or only one
        score category in the whole file.
    """
    mapping = resolve_columns(df, "responses", columns, file=file)
    values = _take(df, mapping, NOT_BLANK["responses"], file)
    score = _numbers(values, "score", mapping["score"], file)
    fractional = score != np.round(score)
    if fractional.any():
        raise FormatError("score must be an ordered integer category (0, 1, 2, ...)", file=file, rows=_rows(values, fractional), column=mapping["score"])
    out = pd.DataFrame({"person": values["person"], "item": values["item"], "score": score.astype("int64")})
    out = out.astype({"person": str, "item": str})
    dup = out.duplicated(["person", "item"], keep=False).to_numpy()
    if dup.any():
        raise FormatError("the same person has more than one score for the same item", file=file, rows=_rows(values, dup), column=mapping["item"])
    if out.score.nunique() < 2:
        raise FormatError(f"every score is {out.score.iloc[0]}; item-response models need at least two categories", file=file, column=mapping["score"])
    return out


def read_ratings(df: pd.DataFrame, columns: dict[str, str] | None = None, *, file: str) -> pd.DataFrame:
    """Read absolute ratings of several systems on the same prompts (issue 3, "Ratings as input").

    Parameters
    ----------
    df : pandas.DataFrame
        The user's table with roles ``prompt, system, score`` and optionally ``annotator``,
        ``criterion``.
    columns : dict, optional
        ``{role: column}`` over the guesses.
    file : str
        File name for error messages.

    Returns
    -------
    pandas.DataFrame
        ``prompt_id, system, criterion`` (str) and ``score`` (float64): the mean over annotators of
        the scores given to a system on a prompt under a criterion (rows without an annotator
        column that repeat a (prompt, system, criterion) are taken as different raters and averaged
        too). Criterion is "overall" when the file has none. Sorted by criterion, prompt, system.

    Raises
    ------
    FormatError
        Missing columns or values, non-numeric scores, a single system, or one annotator scoring the
        same system on the same prompt and criterion twice.
    """
    mapping = resolve_columns(df, "ratings", columns, file=file)
    values = _take(df, mapping, NOT_BLANK["ratings"], file)
    score = _numbers(values, "score", mapping["score"], file)
    _at_least_two_systems(values["system"], mapping["system"], file)
    table = pd.DataFrame({"prompt_id": values["prompt"], "system": values["system"], "criterion": _criteria(values, len(score)), "score": score})
    if "annotator" in values:
        dup = pd.concat([table.iloc[:, :3], pd.Series(values["annotator"], name="annotator")], axis=1).duplicated(keep=False).to_numpy()
        if dup.any():
            raise FormatError(
                "the same annotator scored the same system on the same prompt and criterion more than once",
                file=file, rows=_rows(values, dup), column=mapping["annotator"],
            )
    out = table.groupby(["criterion", "prompt_id", "system"], sort=True, as_index=False)["score"].mean()
    return out[["prompt_id", "system", "criterion", "score"]].astype({"prompt_id": str, "system": str, "criterion": str, "score": "float64"})
