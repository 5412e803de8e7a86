"""Judgment formats: a registry of readers that turn a user's table into canonical tables.

Each format is one :class:`FormatSpec` in ``FORMATS`` (issue 2, "Judgment formats"; issue 3,
"Ratings as input"; issue 10, "One place for each thing"):

- ``pairwise``: one row per A/B/tie vote (without an annotator column, each row is an anonymous vote);
- ``bestworst``: per trial the systems shown and which one was MOST and LEAST (best-worst scaling,
  as in the "Counterfactual AI Writing Study" form); the best beats every other shown system and
  every other shown system beats the worst;
- ``ranking``: a rank per system per trial (lower rank = better); every pair of systems in a trial
  is ordered by rank and equal ranks are ties;
- ``responses``: classic item-response data ``person, item, score`` (ordered integer scores);
- ``ratings``: absolute scores of several systems on the same prompts, averaged over annotators.

Formats that yield votes become one table of pairwise votes (``VOTE_COLUMNS``). Columns of the
user's file are mapped onto the format's *roles*: :func:`lib.io.tables.guess_roles` proposes a mapping and
:func:`resolve_columns` applies the user's choices over it. Files are read by
:func:`lib.io.tables.read_csv` (also importable from here). Every problem raises
:class:`lib.errors.FormatError` naming the file, the 1-based data rows (header = row 0), the column
and what is wrong; no row is ever dropped silently. Adding a format is one :func:`register` call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from lib.errors import FormatError, SettingsError
from lib.io.columns import resolve_roles
from lib.io.tables import ColumnRoles, check_names, guess_roles, numbers, read_csv, row_numbers, text_series

if TYPE_CHECKING:
    import pandas as pd  # imported on use: the command line's parser reads FORMATS without pandas

    from lib.judgments.ratings import RatingMatrix

__all__ = ["FORMATS", "FormatSpec", "Judgments", "format_spec", "read_csv", "register"]  # read_csv: lib.io.tables

VOTE_COLUMNS = ["prompt_id", "system_a", "system_b", "annotator_id", "winner", "criterion"]
DEFAULT_CRITERION = "overall"
_ROW = "_row"  # key of the row numbers in the role -> values dict
_Values = dict[str, Any]  # role -> its cells (text Series from _cells, object arrays from _arrays); _ROW -> file rows


@dataclass(frozen=True)
class FormatSpec:
    """Everything the readers, the Data page and the command line know about one format.

    Attributes
    ----------
    name : str
        The format's name (``--format``, the Data page's choice, ``AnalysisInput.fmt``).
    help : str
        A few words on what a row holds (the Data page's format help).
    required, optional : tuple of str
        Its roles; a required role needs a column.
    not_blank : tuple of str
        Roles whose cells must not be blank (when mapped): a blank is an error, or the row is
        dropped by :func:`drop_incomplete` when the user asks for it.
    read : callable
        ``read(table, columns=None, *, file)``: a :class:`Judgments` when ``votes``, else the
        table ``matrix`` takes. ``table`` is the user's (:func:`lib.io.tables.read_csv`), ``columns``
        maps roles onto its columns over the guesses (``{role: column}``), ``file`` names it in
        error messages.
    votes : bool
        Whether ``read`` yields pairwise votes (their net ratings are the rating matrix).
    matrix : callable, optional
        ``matrix(read_result, criterion, merge_redundant) -> RatingMatrix`` for formats without
        votes.
    cutpoints : {"antisymmetric", "free"}
        The graded response model's default cutpoints (the one home of that default):
        antisymmetric where theta = 0 means "no preference", free (the paper's literal model)
        for item-response data.
    labels : tuple of str
        What the rating matrix's rows and columns are (``("comparisons", "prompts")``).
    merge : bool
        Whether redundant prompts can be averaged (:func:`lib.judgments.ratings.redundancy_groups`).
    synonyms : mapping
        ``{role: column names}`` to guess the format's own roles from (besides the shared ones).
    """

    name: str
    help: str
    required: tuple[str, ...]
    optional: tuple[str, ...]
    not_blank: tuple[str, ...]
    read: Callable[..., Any]
    votes: bool = True
    matrix: Callable[[Any, str | None, bool], RatingMatrix] | None = None
    cutpoints: str = "antisymmetric"
    labels: tuple[str, str] = ("comparisons", "prompts")
    merge: bool = True
    synonyms: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def roles(self) -> tuple[str, ...]:
        """Every role of the format: the required ones, then the optional ones."""
        return self.required + self.optional

    @property
    def column_roles(self) -> ColumnRoles:
        """Its roles as :func:`lib.io.tables.guess_roles` guesses them: required roles first, the
        shared synonyms (e.g. winner/choice/preference/label; item/prompt_id/case;
        annotator/rater/worker/participant/writer; system/model/condition) and its own, the text
        roles (prompt_text, response, response_a, response_b) and its optional roles."""
        return ColumnRoles(self.roles, {**_SYNONYMS, **self.synonyms}, _TEXT_ROLES, self.optional)


FORMATS: dict[str, FormatSpec] = {}
"""The registry, in the order formats are offered (filled at the end of this module)."""


def register(spec: FormatSpec) -> FormatSpec:
    """Add a format to ``FORMATS`` (the command line and the Data page offer it from then on).

    Raises
    ------
    SettingsError
        A format of that name exists, or a format without votes has no ``matrix``.
    """
    if spec.name in FORMATS:
        raise SettingsError(f"format '{spec.name}' is already registered")
    if not spec.votes and spec.matrix is None:
        raise SettingsError(f"format '{spec.name}' yields no votes, so it needs a matrix builder")
    FORMATS[spec.name] = spec
    return spec


def format_spec(fmt: str) -> FormatSpec:
    """``FORMATS[fmt]``, or SettingsError naming the formats (never a bare KeyError)."""
    if fmt not in FORMATS:
        raise SettingsError(f"unknown format '{fmt}'; choose one of {', '.join(FORMATS)}")
    return FORMATS[fmt]


# Column names each role is guessed from, best first (see lib.io.tables.guess_roles).
_SYNONYMS: dict[str, tuple[str, ...]] = {
    "prompt": (
        "prompt",
        "prompt_id",
        "item",
        "item_id",
        "case",
        "case_id",
        "instruction_id",
        "prompt_idx",
        "question_id",
        "example_id",
        "sample_id",
        "input_id",
        "task_id",
        "doc_id",
        "id",
    ),
    "system_a": ("system_a", "model_a", "system1", "model1", "a_system", "a_model", "left_system", "left_model"),
    "system_b": ("system_b", "model_b", "system2", "model2", "b_system", "b_model", "right_system", "right_model"),
    "annotator": (
        "annotator",
        "annotator_id",
        "rater",
        "rater_id",
        "worker",
        "worker_id",
        "participant",
        "participant_id",
        "writer",
        "judge",
        "judge_id",
        "evaluator",
        "labeler",
        "coder",
        "user",
        "user_id",
    ),
    "choice": ("choice", "winner", "preference", "preferred", "label", "vote", "decision", "better", "judgment"),
    "judgment": (
        "judgment",
        "judgement",
        "best_worst",
        "bestworst",
        "bws",
        "most_least",
        "choice",
        "label",
        "selection",
    ),
    "system": (
        "system",
        "model",
        "condition",
        "system_id",
        "system_name",
        "model_id",
        "model_name",
        "generator",
        "method",
    ),
    "rank": ("rank", "ranking", "position", "place"),
    "trial": ("trial", "trial_id", "page", "screen", "hit", "hit_id", "task"),
    "criterion": ("criterion", "criteria", "aspect", "dimension", "metric", "attribute", "question_type"),
    "category": ("category", "categories", "topic", "domain", "prompt_category"),
    "prompt_text": ("prompt_text", "instruction", "prompt_str", "question", "counterfactual", "context", "source_text"),
    "response": ("response", "response_text", "output", "completion", "generation", "passage", "story", "text"),
    "response_a": ("response_a", "output_a", "response1", "output1", "completion_a", "text_a"),
    "response_b": ("response_b", "output_b", "response2", "output2", "completion_b", "text_b"),
    "person": ("person", "person_id", "respondent", "subject", "examinee", "student", "participant", "user", "id"),
    "item": ("item", "item_id", "question", "question_id", "variable"),
    "score": (
        "score",
        "rating",
        "mean_score",
        "mean_human_score",
        "human_score",
        "value",
        "grade",
        "likert",
        "response",
        "points",
    ),
}
_TEXT_ROLES = ("prompt_text", "response", "response_a", "response_b")

_CHOICE_CODES = {
    "a": "a",
    "1": "a",
    "model_a": "a",
    "system_a": "a",
    "b": "b",
    "2": "b",
    "model_b": "b",
    "system_b": "b",
    "tie": "tie",
    "draw": "tie",
    "equal": "tie",
    "=": "tie",
    "0": "tie",
    "tie (bothbad)": "tie",
}
_CHOICE_ALLOWED = (
    "A, B, tie (also draw, equal, =), 1, 2, 0 (1 = A, 2 = B, 0 = tie), model_a / model_b / "
    "tie (bothbad) as in Chatbot Arena and MT-bench, or the row's system_a / system_b name"
)
_JUDGMENT_CODES = {
    "most": "most",
    "best": "most",
    "1": "most",
    "+1": "most",
    "least": "least",
    "worst": "least",
    "-1": "least",
    "middle": "middle",
    "": "middle",
    "0": "middle",
}
_JUDGMENT_ALLOWED = "most / best / 1, least / worst / -1, middle / 0 / blank (any case)"


@dataclass
class Judgments:
    """Canonical pairwise votes with the texts that travel with them.

    Attributes
    ----------
    votes : pandas.DataFrame
        Columns ``VOTE_COLUMNS``, all ``str``; ``winner`` in {"a", "b", "tie"}; one row per vote,
        ``system_a`` / ``system_b`` as the pair appears in the file. A pairwise file may add ``first`` (the
        system shown first), ``response_a`` and ``response_b`` (the vote's two answers, for style control:
        :mod:`lib.ranking.style`), ``style:NAME`` (feature columns the user named) and ``category`` (the vote's
        category: :mod:`lib.ranking.categories`).
    prompt_texts : pandas.DataFrame
        ``prompt_id, prompt_text`` (one row per prompt with a text; may be empty).
    responses : pandas.DataFrame
        ``prompt_id, system, response`` (one row per prompt and system with a text; may be empty).
    source : str
        Name of the file the votes came from.
    notes : tuple of str
        What the reader assumed that the user should know (e.g. votes without an annotator column).
    rows : ndarray (n_votes,) of int64, or None
        The file's 1-based data row (header not counted) of each vote, in ``votes``' order, where one row
        is one vote (pairwise); None where a vote comes from several rows (best-worst, ranking). Filters
        and left-out rows do not renumber them: they name the rows of the user's file.
    """

    votes: pd.DataFrame
    prompt_texts: pd.DataFrame
    responses: pd.DataFrame
    source: str
    notes: tuple[str, ...] = ()
    rows: np.ndarray | None = None


# --------------------------------------------------------------------------------------- columns


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
        A key of ``FORMATS``; None when no format's required roles are all recognised by name.
    """
    fits = {}
    for fmt, spec in FORMATS.items():
        guess = guess_roles(columns, spec.column_roles)
        if set(spec.required) <= set(guess):
            fits[fmt] = (len(spec.required), len(guess))
    return max(fits, key=fits.__getitem__) if fits else None


def resolve_columns(df: pd.DataFrame, fmt: str, columns: dict[str, str] | None, *, file: str) -> dict[str, str]:
    """The user's ``{role: column}`` mapping over the guesses for ``fmt``, checked against the file.

    See :func:`lib.io.columns.resolve_roles` (an empty column name unsets a role).

    Raises
    ------
    SettingsError
        Unknown format.
    FormatError
        Unknown role, a mapped column not in the file, a required role without column.
    """
    spec = format_spec(fmt)
    guesses = guess_roles(list(df.columns), spec.column_roles, df)
    return resolve_roles(
        list(df.columns), spec.required, spec.optional, guesses, columns, file=file, what=f"the {fmt} format"
    )


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
        raise FormatError(
            f"column '{column}' is not in the file; its columns are {', '.join(map(str, df.columns))}",
            file=file,
            column=column,
        )
    if not len(values):
        raise SettingsError(f"choose at least one value of column '{column}' to keep")
    cells = text_series(df[column])
    known = sorted(cells.unique())
    for value in values:
        if value not in known:
            raise SettingsError(
                f"'{value}' is not a value of column '{column}' in {file}; its values are "
                f"{', '.join(known[:20])}{' ...' if len(known) > 20 else ''}"
            )
    return df[cells.isin(list(values)).to_numpy()]


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
    cells = text_series(df[mapping["criterion"]])
    known = sorted(set(cells.unique()) - {""})
    if criterion not in known:
        raise SettingsError(f"unknown criterion '{criterion}'; the data has: {', '.join(known)}")
    return df[cells.isin([criterion, ""]).to_numpy()]


def drop_incomplete(
    df: pd.DataFrame,
    fmt: str,
    mapping: dict[str, str],
    *,
    file: str,
) -> tuple[pd.DataFrame, list[int]]:
    """Leave out the rows with a blank cell in a role that must not be blank
    (``FormatSpec.not_blank``).

    Returns
    -------
    (table, dropped)
        The complete rows, and the file's 1-based data row numbers of the rows left out (for the
        caller to report: nothing is dropped silently).

    Raises
    ------
    SettingsError
        Unknown format.
    FormatError
        Every row has a blank, so nothing would be left.
    """
    cols = [mapping[r] for r in format_spec(fmt).not_blank if mapping.get(r)]
    blank = np.zeros(len(df), dtype=bool)
    for col in cols:
        blank |= (text_series(df[col]) == "").to_numpy()
    if blank.all():
        raise FormatError(
            f"every row has a blank in one of the columns {', '.join(cols)}; nothing is left to analyse", file=file
        )
    return df[~blank], [int(r) for r in row_numbers(df)[blank]]


# --------------------------------------------------------------------------------------- helpers


def _rows(values: _Values, which: np.ndarray) -> list[int]:
    """1-based data rows of the file for a boolean mask or positions (see ``_cells``)."""
    return [int(r) for r in values[_ROW][which]]


def _refuse(values: _Values, bad: np.ndarray, message: str, column: str, file: str) -> None:
    """Raise a FormatError with ``message`` naming the file rows where the boolean mask ``bad`` holds, if any.

    Raises
    ------
    FormatError
        Some row is ``bad``.
    """
    if bad.any():
        raise FormatError(message, file=file, rows=_rows(values, bad), column=column)


def _refuse_unknown(
    values: _Values, raw: np.ndarray | pd.Series, unknown: np.ndarray, what: str, allowed: str, column: str, file: str
) -> None:
    """Refuse the rows whose ``what`` value (``raw``, by position) is ``unknown`` (a mask), naming up to five such
    values and the ``allowed`` ones.

    Raises
    ------
    FormatError
        Some value is unknown.
    """
    if unknown.any():
        import pandas as pd

        shown = ", ".join(repr(v) for v in pd.unique(np.asarray(raw, dtype=object)[unknown])[:5])
        _refuse(values, unknown, f"unknown {what} value {shown}; allowed: {allowed}", column, file)


def _cells(
    df: pd.DataFrame,
    fmt: str,
    columns: dict[str, str] | None,
    file: str,
) -> tuple[_Values, dict[str, str]]:
    """Text of the format's mapped roles (:func:`lib.io.tables.text_series`: pandas' ``str``, indexed by position)
    and, under ``_ROW``, each row's file row, with the mapping.

    Row numbers come from the index that :func:`lib.io.tables.read_csv` set, so they stay right when
    the caller filtered rows (e.g. one criterion). A blank cell in a not-blank role is an error.
    """
    mapping = resolve_columns(df, fmt, columns, file=file)
    values: _Values = {role: text_series(df[col]) for role, col in mapping.items()}
    values[_ROW] = row_numbers(df)
    for role in [r for r in mapping if r not in _TEXT_ROLES]:
        check_names(values[role], values[_ROW], what=role, column=mapping[role], file=file)
    for role in format_spec(fmt).not_blank:
        if role in values:
            _refuse(values, (values[role] == "").to_numpy(), f"missing value for role '{role}'", mapping[role], file)
    return values, mapping


def _arrays(values: _Values) -> _Values:
    """``values`` of :func:`_cells` with each role's cells as an object array of Python strings, for the readers
    that go through them one by one (trials, item responses, ratings)."""
    return {role: cells if role == _ROW else cells.to_numpy(dtype=object) for role, cells in values.items()}


def _numbers(values: _Values, role: str, column: str, file: str) -> np.ndarray:
    return numbers(values[role], values[_ROW], what=role, column=column, file=file)


def _criteria(values: _Values, n: int) -> np.ndarray:
    return values["criterion"] if "criterion" in values else np.full(n, DEFAULT_CRITERION, dtype=object)


def _at_least_two_systems(systems: np.ndarray, column: str, file: str) -> None:
    import pandas as pd

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
    import pandas as pd

    pt = pd.DataFrame({"prompt_id": prompts, "prompt_text": prompt_text if prompt_text is not None else ""})
    pt = pt[pt.prompt_text != ""].drop_duplicates("prompt_id").reset_index(drop=True)
    frames = [pd.DataFrame({"prompt_id": prompts, "system": s, "response": r}) for s, r in pairs]
    rs = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["prompt_id", "system", "response"])
    rs = rs[rs.response != ""].drop_duplicates(["prompt_id", "system"]).reset_index(drop=True)
    return pt.astype(str), rs.astype(str)


def _votes_frame(records: list[tuple[str, str, str, str, str, str]]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(records, columns=VOTE_COLUMNS, dtype=str)


# --------------------------------------------------------------------------------------- readers


def read_judgments(df: pd.DataFrame, fmt: str, columns: dict[str, str] | None = None, *, file: str) -> Judgments:
    """Convert a table of a format that yields votes into canonical pairwise votes.

    Parameters
    ----------
    df : pandas.DataFrame
        The user's table (as read by :func:`lib.io.tables.read_csv`), one row per vote (pairwise) or
        per system shown in a trial (best-worst, ranking).
    fmt : str
        A key of ``FORMATS`` whose spec has ``votes`` (pairwise, bestworst, ranking).
    columns : dict, optional
        ``{role: column}`` over the guesses (the spec's roles).
    file : str
        File name for error messages.

    Returns
    -------
    Judgments
        See :func:`read_pairwise`, :func:`read_bestworst`, :func:`read_ranking`.

    Raises
    ------
    SettingsError
        Unknown format.
    FormatError
        A format without votes, or anything its reader refuses.
    """
    spec = format_spec(fmt)
    if not spec.votes:
        voting = ", ".join(name for name, s in FORMATS.items() if s.votes)
        raise FormatError(f"'{fmt}' is not a judgment format; choose one of {voting}", file=file)
    return spec.read(df, columns, file=file)


def read_pairwise(df: pd.DataFrame, columns: dict[str, str] | None = None, *, file: str) -> Judgments:
    """Pairwise votes, one per row.

    The choice may be A/B/tie (any case; draw, equal, = for tie), 1/2/0, model_a/model_b/tie
    (bothbad), or a system name of that row (codes win over system names; exact names over names
    differing in case). Without an annotator column (an arena's file: ``prompt_id, system_a, system_b,
    winner``) each row is one vote of its own anonymous annotator (:data:`ANONYMOUS_ANNOTATOR`), and the
    result's notes say that annotator effects cannot be estimated.

    Raises
    ------
    FormatError
        Missing columns or values, unknown choice values, a system compared with itself, a single
        system overall, duplicated votes (same prompt, system pair, annotator and criterion).
    """
    import pandas as pd

    # The cells stay pandas' str (pyarrow) from the file to the votes: compared, factorized and kept as they are.
    values, mapping = _cells(df, "pairwise", columns, file)
    sa, sb = values["system_a"], values["system_b"]
    both = pd.concat([sa, sb], ignore_index=True)
    _at_least_two_systems(both, mapping["system_b"], file)
    _refuse(
        values,
        (sa == sb).to_numpy(),
        "a system is compared with itself (system_a = system_b)",
        mapping["system_b"],
        file,
    )

    raw = values["choice"]
    winner = _each_distinct(raw, lambda c: _CHOICE_CODES.get(c.lower(), ""))
    for fold in (None, str.casefold):  # exact system names first, then ignoring case
        for code, names in (("a", sa), ("b", sb)):
            rest = np.flatnonzero(winner == "")
            said, name = raw.iloc[rest], names.iloc[rest]
            same = (
                (said == name).to_numpy() if fold is None else _each_distinct(said, fold) == _each_distinct(name, fold)
            )
            winner[rest[same]] = code
    _refuse_unknown(values, raw, winner == "", "choice", _CHOICE_ALLOWED, mapping["choice"], file)

    criterion = _criteria(values, len(sa))
    anonymous = "annotator" not in values
    if anonymous:  # one vote per row, each its own annotator: a repeated (prompt, pair) is another person's vote
        before, _, after = ANONYMOUS_ANNOTATOR.partition("{row}")  # its template, filled for every row at once
        values["annotator"] = before + pd.Series(values[_ROW]).astype(str) + after
    if not anonymous:  # anonymous rows are each their own annotator: never a duplicate, and no column to name
        # each column as codes: the unordered pair from the systems' codes (one code a name in either column)
        system = pd.factorize(both)[0]
        a, b = system[: len(sa)], system[len(sa) :]
        parts = (values["prompt"], values["annotator"], criterion)
        key = pd.DataFrame({i: pd.factorize(part)[0] for i, part in enumerate(parts)})
        key["low"], key["high"] = np.minimum(a, b), np.maximum(a, b)
        _refuse(
            values,
            key.duplicated(keep=False).to_numpy(),
            "duplicated votes: the same annotator judged the same system pair on the same prompt and criterion "
            "more than once",
            mapping["annotator"],
            file,
        )
    votes = pd.DataFrame(
        {
            "prompt_id": values["prompt"],
            "system_a": sa,
            "system_b": sb,
            "annotator_id": values["annotator"],
            "winner": winner,
            "criterion": criterion,
        },
        dtype=str,
    )
    if "position" in values:
        votes["first"] = _first_shown(values, sa, sb, mapping["position"], file)
    if "category" in values:  # the vote's category (rank --by category: lib.ranking.categories)
        votes["category"] = values["category"]
    if "response_a" in values and "response_b" in values:  # each vote's own two answers (style control)
        votes["response_a"], votes["response_b"] = values["response_a"], values["response_b"]
    pairs = [(sa, values[r]) for r in ("response_a",) if r in values] + [
        (sb, values[r]) for r in ("response_b",) if r in values
    ]
    prompt_texts, responses = _texts(values["prompt"], values.get("prompt_text"), pairs)
    notes = (NO_ANNOTATOR_NOTE,) if anonymous else ()
    return Judgments(votes, prompt_texts, responses, file, notes, values[_ROW].astype(np.int64))


ANONYMOUS_ANNOTATOR = "anonymous (row {row})"
"""The annotator of a pairwise vote read from a file without an annotator column: one per row (the file's row)."""

NO_ANNOTATOR_NOTE = (
    "no annotator column: each row is read as one vote of its own anonymous annotator, so annotator effects "
    "cannot be estimated (an annotator's severity or leniency, agreement between annotators)"
)


_POSITION_ALLOWED = (
    "a / left / first / 1 (system_a shown first), b / right / second / 2, the row's system name, or blank (not known)"
)


def _first_shown(values: _Values, sa: pd.Series, sb: pd.Series, column: str, file: str) -> pd.Series:
    """The system shown first (on the left) per vote, "" where the cell is blank (issue 11, position bias)."""
    raw = values["position"]
    code = _each_distinct(raw, str.lower)
    first = sa.where(
        np.isin(code, ["a", "left", "first", "1"]) | (raw == sa).to_numpy(),
        sb.where(np.isin(code, ["b", "right", "second", "2"]) | (raw == sb).to_numpy(), ""),
    )
    unknown = (first == "").to_numpy() & (raw != "").to_numpy()
    _refuse_unknown(values, raw, unknown, "position", _POSITION_ALLOWED, column, file)
    return first


def _each_distinct(cells: pd.Series, f: Callable[[str], str]) -> np.ndarray:
    """``f`` of each cell (object array, by position), called once per distinct value (a handful of choices, positions
    or system names)."""
    import pandas as pd

    seen, distinct = pd.factorize(cells)
    return np.array([f(c) for c in distinct], dtype=object)[seen]


def read_bestworst(df: pd.DataFrame, columns: dict[str, str] | None = None, *, file: str) -> Judgments:
    """Best-worst trials: a trial is (annotator, prompt, criterion[, trial column]).

    MOST beats every other shown system and every other beats LEAST, so a trial of n systems gives
    2n - 3 votes (3 for n = 3; pairs of two middle systems are unknown).

    Raises
    ------
    FormatError
        Missing columns or values, a single system overall, unknown judgment values, a trial with
        one system, a system listed twice in a trial, a trial without exactly one MOST and one LEAST.
    """
    values, mapping = _cells(df, "bestworst", columns, file)
    values = _arrays(values)
    _at_least_two_systems(values["system"], mapping["system"], file)
    raw = values["judgment"]
    code = np.array([_JUDGMENT_CODES.get(v.lower(), "") for v in raw], dtype=object)
    _refuse_unknown(values, raw, code == "", "judgment", _JUDGMENT_ALLOWED, mapping["judgment"], file)
    # Score most = 1, middle = 0, least = -1: pairs of two middle systems are unknown.
    score = np.select([code == "most", code == "least"], [1, -1], 0)

    def one_most_one_least(idx: np.ndarray, where: str) -> None:
        most, least = (score[idx] == 1).sum(), (score[idx] == -1).sum()
        if most != 1 or least != 1:
            raise FormatError(
                f"{where} needs exactly one MOST and one LEAST, found {most} MOST and {least} LEAST",
                file=file,
                rows=_rows(values, idx),
                column=mapping["judgment"],
            )

    return _trials(values, mapping, file, score, check=one_most_one_least, middle_unknown=True)


def read_ranking(df: pd.DataFrame, columns: dict[str, str] | None = None, *, file: str) -> Judgments:
    """Ranking trials: every pair in a trial, lower rank wins, equal ranks tie: n(n - 1)/2 votes.

    Raises
    ------
    FormatError
        Missing columns or values, a single system overall, non-numeric ranks, a trial with one
        system, a system listed twice in a trial.
    """
    values, mapping = _cells(df, "ranking", columns, file)
    values = _arrays(values)
    _at_least_two_systems(values["system"], mapping["system"], file)
    rank = _numbers(values, "rank", mapping["rank"], file)
    return _trials(values, mapping, file, -rank)


def _positions(values: _Values, mapping: dict[str, str], file: str) -> np.ndarray | None:
    """The ``position`` role's numbers (NaN where blank), None without the role.

    Raises
    ------
    FormatError
        A position that is not a number.
    """
    return _numbers(values, "position", mapping["position"], file) if "position" in values else None


def _trials(
    values: _Values,
    mapping: dict[str, str],
    file: str,
    score: np.ndarray,
    *,
    check: Callable[[np.ndarray, str], None] | None = None,
    middle_unknown: bool = False,
) -> Judgments:
    """Votes of every pair of systems within each trial, the higher ``score`` winning.

    Within a trial pairs are emitted in row order (``system_a`` = the earlier row); with
    ``middle_unknown`` a pair of two scores 0 gives no vote. ``check(rows, where)`` refuses a trial. With a
    ``position`` role (best-worst: 1 = shown first) each vote's ``first`` is the one of its two systems shown
    earlier ("" where a position is blank), for the leaderboard's position bias.

    Raises
    ------
    FormatError
        A trial with one system, a system listed twice in a trial.
    """
    import pandas as pd

    system = values["system"]
    criterion = _criteria(values, len(system))
    keys = {"annotator": values["annotator"], "prompt": values["prompt"], "criterion": criterion}
    if "trial" in values:
        keys["trial"] = values["trial"]
    groups = pd.DataFrame(keys).groupby(list(keys), sort=False).indices
    hint = (
        ""
        if "trial" in values
        else "; if it was judged more than once, map a 'trial' column that tells the judgments apart"
    )

    records: list[tuple[str, str, str, str, str, str]] = []
    firsts: list[str] = []
    position = _positions(values, mapping, file)
    for idx in groups.values():
        idx = np.sort(idx)
        first = idx[0]
        trial = f", trial '{values['trial'][first]}'" if "trial" in values else ""
        where = (
            f"trial (annotator '{values['annotator'][first]}', prompt '{values['prompt'][first]}', "
            f"criterion '{criterion[first]}'{trial})"
        )
        shown = system[idx]
        if len(idx) < 2:
            raise FormatError(
                f"{where} shows only one system",
                file=file,
                rows=_rows(values, idx),
                column=mapping["system"],
            )
        repeated = pd.Series(shown).duplicated(keep=False).to_numpy()
        if repeated.any():
            names = ", ".join(f"'{s}'" for s in pd.unique(shown[repeated]))
            raise FormatError(
                f"system {names} listed more than once in {where}{hint}",
                file=file,
                rows=_rows(values, idx[repeated]),
                column=mapping["system"],
            )
        if check is not None:
            check(idx, where)
        s = score[idx]
        a_name, p, r = values["annotator"][first], values["prompt"][first], criterion[first]
        for i in range(len(idx)):
            for j in range(i + 1, len(idx)):
                if middle_unknown and s[i] == 0 and s[j] == 0:
                    continue
                winner = "a" if s[i] > s[j] else "b" if s[i] < s[j] else "tie"
                records.append((p, shown[i], shown[j], a_name, winner, r))
                if position is not None:
                    pi, pj = position[idx[i]], position[idx[j]]
                    firsts.append(shown[i] if pi < pj else shown[j] if pj < pi else "")
    votes = _votes_frame(records)
    if position is not None:
        votes["first"] = firsts
    pairs = [(system, values["response"])] if "response" in values else []
    prompt_texts, responses = _texts(values["prompt"], values.get("prompt_text"), pairs)
    return Judgments(votes, prompt_texts, responses, file)


def read_responses(df: pd.DataFrame, columns: dict[str, str] | None = None, *, file: str) -> pd.DataFrame:
    """Read classic item-response data (one row per person and item; roles ``person, item, score``).

    A :attr:`FormatSpec.read` reader: its parameters are described there.

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
    import pandas as pd

    values, mapping = _cells(df, "responses", columns, file)
    values = _arrays(values)
    score = _numbers(values, "score", mapping["score"], file)
    fractional = score != np.round(score)
    _refuse(values, fractional, "score must be an ordered integer category (0, 1, 2, ...)", mapping["score"], file)
    out = pd.DataFrame({"person": values["person"], "item": values["item"], "score": score.astype("int64")})
    out = out.astype({"person": str, "item": str})
    dup = out.duplicated(["person", "item"], keep=False).to_numpy()
    _refuse(values, dup, "the same person has more than one score for the same item", mapping["item"], file)
    if out.score.nunique() < 2:
        raise FormatError(
            f"every score is {out.score.iloc[0]}; item-response models need at least two categories",
            file=file,
            column=mapping["score"],
        )
    return out


def read_ratings(df: pd.DataFrame, columns: dict[str, str] | None = None, *, file: str) -> pd.DataFrame:
    """Read absolute ratings of several systems on the same prompts (issue 3, "Ratings as input").

    Roles ``prompt, system, score`` and optionally ``annotator``, ``criterion``. A :attr:`FormatSpec.read`
    reader: its parameters are described there.

    Returns
    -------
    pandas.DataFrame
        ``prompt_id, system, criterion, annotator_id`` (str) and ``score`` (float64): one row per
        score given, so that a model can tell annotators apart (:mod:`lib.ranking.model`); the
        consumers that need one score per (prompt, system) average over annotators themselves
        (:func:`lib.judgments.ratings.from_absolute_ratings`). ``annotator_id`` is "" when the file has no
        annotator column (rows that then repeat a (prompt, system, criterion) are different raters
        and stay separate). Criterion is "overall" when the file has none. Sorted by criterion,
        prompt, system, annotator; repeated cells without annotators keep the file's order.

    Raises
    ------
    FormatError
        Missing columns or values, non-numeric scores, a single system, or one annotator scoring the
        same system on the same prompt and criterion twice.
    """
    import pandas as pd

    values, mapping = _cells(df, "ratings", columns, file)
    values = _arrays(values)
    score = _numbers(values, "score", mapping["score"], file)
    _at_least_two_systems(values["system"], mapping["system"], file)
    table = pd.DataFrame(
        {
            "prompt_id": values["prompt"],
            "system": values["system"],
            "criterion": _criteria(values, len(score)),
            "annotator_id": values.get("annotator", np.full(len(score), "", dtype=object)),
            "score": score,
        }
    ).astype({"prompt_id": str, "system": str, "criterion": str, "annotator_id": str, "score": "float64"})
    if "annotator" in values:
        _refuse(
            values,
            table.duplicated(["prompt_id", "system", "criterion", "annotator_id"], keep=False).to_numpy(),
            "the same annotator scored the same system on the same prompt and criterion more than once",
            mapping["annotator"],
            file,
        )
    return table.sort_values(["criterion", "prompt_id", "system", "annotator_id"], kind="stable", ignore_index=True)


# --------------------------------------------------------------------------------------- matrices
# lib.judgments.ratings imports scipy: imported on use, so that ``python -m lib --help`` stays fast.


def _responses_matrix(responses: pd.DataFrame, criterion: str | None, merge_redundant: bool) -> RatingMatrix:
    from lib.judgments.ratings import from_responses

    return from_responses(responses)


def _ratings_matrix(ratings: pd.DataFrame, criterion: str | None, merge_redundant: bool) -> RatingMatrix:
    from lib.judgments.ratings import from_absolute_ratings

    return from_absolute_ratings(ratings, criterion, merge_redundant=merge_redundant)


# --------------------------------------------------------------------------------------- registry

_TRIAL_OPTIONAL = ("trial", "criterion", "prompt_text", "response")
register(
    FormatSpec(
        "pairwise",
        "A/B/tie votes",
        required=("prompt", "system_a", "system_b", "choice"),
        optional=("annotator", "criterion", "prompt_text", "response_a", "response_b", "position", "category"),
        synonyms={"position": ("position", "shown_first", "first_shown", "presented_first")},
        not_blank=("prompt", "system_a", "system_b", "annotator", "choice", "criterion", "category"),
        read=read_pairwise,
    )
)
register(
    FormatSpec(
        "bestworst",
        "MOST/LEAST picks",
        required=("prompt", "annotator", "system", "judgment"),
        optional=(*_TRIAL_OPTIONAL, "position"),
        synonyms={"position": ("position", "shown_position", "presented_position")},
        not_blank=("prompt", "annotator", "system", "criterion", "trial"),  # a blank judgment = middle
        read=read_bestworst,
    )
)
register(
    FormatSpec(
        "ranking",
        "a rank per system",
        required=("prompt", "annotator", "system", "rank"),
        optional=_TRIAL_OPTIONAL,
        not_blank=("prompt", "annotator", "system", "rank", "criterion", "trial"),
        read=read_ranking,
    )
)
register(
    FormatSpec(
        "responses",
        "person, item, score",
        required=("person", "item", "score"),
        optional=(),
        not_blank=("person", "item", "score"),
        read=read_responses,
        votes=False,
        matrix=_responses_matrix,
        cutpoints="free",
        labels=("persons", "items"),
        merge=False,
    )
)
register(
    FormatSpec(
        "ratings",
        "scores per system",
        required=("prompt", "system", "score"),
        optional=("annotator", "criterion", "prompt_text", "response"),
        not_blank=("prompt", "system", "score", "annotator", "criterion"),
        read=read_ratings,
        votes=False,
        matrix=_ratings_matrix,
    )
)
