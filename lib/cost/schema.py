"""Column roles of a with/without-model study and its validation (Casares et al. 2022, Fig. 2).

A study is a long table, one row per participant x task instance, read by
:func:`lib.io.tables.read_csv`. Columns of the user's file are mapped onto *roles* (``ROLES``);
:func:`lib.io.tables.guess_roles` proposes a mapping (:data:`STUDY_ROLES`), :func:`read_study` applies
the user's choices over it and validates every cell into a :class:`lib.cost.study.Study`. Problems raise
:class:`lib.errors.FormatError` (or :class:`lib.errors.SettingsError` for bad settings) naming the
file, the 1-based data rows (header = row 0), the column and what is wrong; no row is dropped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from lib.cost.loss import likert_to_loss
from lib.cost.study import CANONICAL, TIMES, WITH_TIMES, WITHOUT_TIMES, Study
from lib.errors import FormatError, SettingsError
from lib.io.columns import resolve_roles
from lib.io.tables import ColumnRoles, check_names, combine_columns, guess_roles, numbers, refuse, row_numbers, text

REQUIRED = ("condition", "participant", "task", "instance", "usefulness")
OPTIONAL = (*TIMES, "external_loss")
ROLES = REQUIRED + OPTIONAL

ROLE_HELP = {
    "condition": "two labels: with the model / without it",
    "participant": "who answered",
    "task": "task or domain",
    "instance": "difficulty order h within the task, 1 = easiest",
    "usefulness": "Likert usefulness s, 1-5",
    "prompt_time_s": "with model: devising + wrapping the prompt (D_H + W_H), seconds",
    "unwrap_time_s": "with model: extracting the answer (U_H), seconds",
    "validate_time_s": "with model: checking the answer (V_H), seconds",
    "solve_time_s": "without model: solving the task (G_H), seconds (may be the prompt-time column: each role "
    "then reads its own condition's rows)",
    "external_loss": "loss L_E in [0, 1] judged by the researchers",
}

# Names each role is guessed from, best first (see lib.io.tables.guess_roles).
_SYNONYMS: dict[str, tuple[str, ...]] = {
    "condition": ("condition", "group", "arm", "treatment", "setting", "assisted", "with_model", "mode"),
    "participant": (
        "participant",
        "participant_id",
        "respondent",
        "subject",
        "volunteer",
        "user",
        "user_id",
        "worker",
        "worker_id",
        "person",
        "rater",
        "annotator",
    ),
    "task": ("task", "domain", "task_name", "task_id", "category"),
    "instance": ("instance", "h", "difficulty", "level", "instance_id", "item", "question", "step"),
    "usefulness": ("usefulness", "useful", "likert", "usefulness_likert", "s", "score", "rating"),
    "prompt_time_s": (
        "prompt_time_s",
        "prompt_time",
        "prompting_time",
        "wrap_time",
        "wrap_time_s",
        "time_prompt",
        "prompt_seconds",
    ),
    "unwrap_time_s": (
        "unwrap_time_s",
        "unwrap_time",
        "extract_time",
        "extraction_time",
        "time_unwrap",
        "unwrapping_time",
        "time_extract",
        "time_extraction",
        "extracting_time",
    ),
    "validate_time_s": (
        "validate_time_s",
        "validate_time",
        "validation_time",
        "check_time",
        "verify_time",
        "time_validate",
    ),
    "solve_time_s": ("solve_time_s", "solve_time", "solving_time", "time_solve", "time_without_model"),
    "external_loss": ("external_loss", "l_e", "loss_external", "expert_loss", "le"),
}
_UNITS = ("s", "sec", "secs", "seconds")
for _role in TIMES:  # "Extraction time (s)", "extraction_time_seconds": the unit is part of many names
    _SYNONYMS[_role] += tuple(f"{name}_{unit}" for name in _SYNONYMS[_role] for unit in _UNITS)

STUDY_ROLES = ColumnRoles(ROLES, _SYNONYMS)
"""A study's roles as :func:`lib.io.tables.guess_roles` guesses them (case and punctuation are ignored:
"Prompt time (s)" matches ``prompt_time_s``)."""

# Ordered text values recognised without the user giving an order (participant covariates).
KNOWN_ORDERS: tuple[tuple[str, ...], ...] = (
    ("A1", "A2", "B1", "B2", "C1", "C2"),
    ("never", "rarely", "sometimes", "often", "always"),
    ("none", "low", "medium", "high"),
    ("basic", "intermediate", "advanced", "native"),
    ("no", "yes"),
)


def guess_with_label(labels: Sequence[str]) -> str:
    """Pick the condition label that most likely means "with the model".

    A label naming a model (model, gpt, llm, ai, assisted, with) and not its absence (without,
    no, human, alone, control) wins; otherwise the first label in sorted order.
    """
    ordered = sorted(map(str, labels))

    def score(label: str) -> int:
        low = label.lower()
        negative = re.search(r"without|\bno\b|\bno[_-]|human|alone|control|unassisted|baseline", low)
        positive = re.search(r"model|gpt|llm|\bai\b|assist|with|machine|copilot", low)
        return (1 if positive else 0) - (2 if negative else 0)

    return max(ordered, key=score)


ID_WORDS = ("id", "uuid", "guid")
"""A column whose name ends in one of these words (``session_id``, ``SessionID``) labels rows or
people; its numbers are not a measurement to correlate."""

ORDER_WORDS = (
    "session",
    "sessions",
    "trial",
    "round",
    "run",
    "batch",
    "order",
    "sequence",
    "seq",
    "index",
    "idx",
    "number",
    "nr",
    "row",
)
"""A column whose name is or ends in one of these words (``session``, ``Session number``, ``row_nr``)
numbers sessions, runs or rows; a participant's session number is not a covariate (issue 16)."""


def id_like(name: str) -> bool:
    """True for a column name whose last word (split at ``_``, spaces and camelCase) is an id word,
    or a word that numbers sessions, runs or rows (``ORDER_WORDS``)."""
    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", str(name))
    return bool(words) and words[-1].lower() in ID_WORDS + ORDER_WORDS


def guess_covariates(df: pd.DataFrame, mapping: Mapping[str, str]) -> dict[str, list[str] | None]:
    """Participant covariates among the unmapped columns.

    Returns
    -------
    dict
        ``{column: None}`` for numeric columns and ``{column: levels}`` for text columns whose
        values all belong to one of ``KNOWN_ORDERS`` (e.g. CEFR English levels A1 < ... < C2);
        only columns constant within each participant (when a participant column is mapped), and
        never id-like ones (:func:`id_like`).
    """
    used = set(mapping.values()) | set(CANONICAL)
    people = text(df[mapping["participant"]]) if mapping.get("participant") in df.columns else None
    found: dict[str, list[str] | None] = {}
    for col in df.columns:
        if col in used or id_like(col):
            continue
        cells = text(df[col])
        filled = cells[cells != ""]
        if len(filled) == 0:
            continue
        if people is not None:
            per_person = pd.DataFrame({"p": people, "v": cells})[cells != ""].groupby("p").v.nunique()
            if (per_person > 1).any():
                continue
        if pd.to_numeric(pd.Series(filled), errors="coerce").notna().all():
            found[col] = None
            continue
        values = {v.lower() for v in filled}
        for order in KNOWN_ORDERS:
            if values <= {v.lower() for v in order}:
                found[col] = list(order)
                break
    return found


def parse_covariates(text: str | None) -> dict[str, list[str] | None] | None:
    """Parse ``--covariates NAME[=LOW<...<HIGH],...``; None (not given) means guess them.

    Raises
    ------
    SettingsError
        An entry without a name, or an order with an empty or repeated level.
    """
    if text is None:
        return None
    spec: dict[str, list[str] | None] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, order = part.partition("=")
        if not name.strip():
            raise SettingsError(f"--covariates entry '{part}' has no column name")
        levels = [v.strip() for v in order.split("<")] if sep else None
        if levels is not None and (any(not v for v in levels) or len(set(levels)) != len(levels)):
            raise SettingsError(f"--covariates entry '{part}': give the order as LOW<...<HIGH with distinct levels")
        spec[name.strip()] = levels
    return spec


def resolve_columns(df: pd.DataFrame, columns: Mapping[str, str] | None, *, file: str) -> dict[str, str]:
    """The user's mapping over the guesses, checked against the file.

    An empty column name unsets a role (and keeps it from being guessed).

    Raises
    ------
    FormatError
        Unknown role, a mapped column that is not in the file, or a required role without a column.
    """
    return resolve_roles(
        list(df.columns),
        REQUIRED,
        OPTIONAL,
        guess_roles(list(df.columns), STUDY_ROLES),
        columns,
        file=file,
        what="the study table",
    )


def read_study(
    df: pd.DataFrame,
    columns: Mapping[str, str] | None = None,
    *,
    with_label: str | None = None,
    covariates: Mapping[str, Sequence[str] | None] | None = None,
    file: str,
) -> Study:
    """Validate a study table and convert it to canonical columns.

    Parameters
    ----------
    df : pandas.DataFrame
        The user's table, one row per participant x task instance (e.g. from
        :func:`lib.io.tables.read_csv`, which keeps every cell as text).
    columns : mapping, optional
        ``{role: column}`` over the guesses (see ``ROLES``).
    with_label : str, optional
        The condition label meaning "with the model"; guessed when not given.
    covariates : mapping, optional
        ``{column: None}`` for numeric covariates, ``{column: [low, ..., high]}`` for ordered text;
        None guesses them (:func:`guess_covariates`), ``{}`` uses none.
    file : str
        File name for messages.

    Returns
    -------
    Study

    Raises
    ------
    FormatError
        A blank condition, participant, task or instance; not exactly two condition labels; an
        instance that is not an integer >= 1; a usefulness outside 1-5 or a loss outside [0, 1];
        a negative or non-numeric time; a with-model time on a without-model row or the reverse;
        the same participant, task and instance twice; a covariate that is not numeric or not in
        its order, or that changes within a participant; an unknown role, a mapped column that is
        not in the file, or a required role without column.
    SettingsError
        A ``with_label`` that is not one of the labels, or a covariate that is also mapped to a role.
    """
    df = combine_columns(df, columns, file=file)
    mapping = resolve_columns(df, columns, file=file)
    rows = row_numbers(df)
    cells = {role: text(df[col]) for role, col in mapping.items()}
    for role in ("condition", "participant", "task", "instance"):
        refuse(cells[role] == "", f"missing {role}", rows, mapping[role], file)
        check_names(cells[role], rows, what=role, column=mapping[role], file=file)

    with_label, without_label = _condition_labels(cells["condition"], with_label, mapping["condition"], file)
    with_model = cells["condition"] == with_label

    out = pd.DataFrame(
        {
            "row": rows,
            "condition": cells["condition"],
            "with_model": with_model,
            "participant": cells["participant"],
            "task": cells["task"],
        }
    )
    warnings = _add_measures(out, df, cells, mapping, (with_label, without_label), rows, file)

    key = ["condition", "participant", "task", "instance"]
    dup = out.duplicated(key, keep=False).to_numpy()
    refuse(
        dup, "the same condition, participant, task and instance appear more than once", rows, mapping["instance"], file
    )

    if covariates is None:
        covariates = guess_covariates(df, mapping)
    for col, order in covariates.items():
        _add_covariate(out, df, mapping, col, order, rows, file)

    both = set(out.participant[with_model]) & set(out.participant[~with_model])
    if both:
        warnings.append(
            f"{len(both)} participant(s) appear in both conditions (e.g. {sorted(both)[0]}); the tests "
            "assume independent groups as in the paper's between-subjects design"
        )
    return Study(
        data=out,
        with_label=str(with_label),
        without_label=str(without_label),
        tasks=[str(t) for t in pd.unique(out["task"])],
        covariates=list(covariates),
        measured=[r for r in OPTIONAL if r in mapping],
        file=file,
        warnings=warnings,
    )


def _add_measures(
    out: pd.DataFrame,
    df: pd.DataFrame,
    cells: dict[str, np.ndarray],
    mapping: dict[str, str],
    labels: tuple[str, str],
    rows: np.ndarray,
    file: str,
) -> list[str]:
    """Add the numeric columns to ``out``: instance, usefulness and its loss, the times, the external loss.

    ``labels`` are the with-model and the without-model label. One time column filled on both
    conditions' rows is read per condition (``mapping`` gains ``solve_time_s``; the returned warning
    says so).

    Raises
    ------
    FormatError
        An instance that is not a whole number >= 1, a usefulness outside 1-5, a negative or misplaced
        time, an external loss outside [0, 1], or a value that is not a number.
    """
    with_label, without_label = labels
    with_model = out["with_model"].to_numpy()
    instance = numbers(cells["instance"], rows, what="instance", column=mapping["instance"], file=file)
    refuse(
        (instance < 1) | (instance != np.round(instance)),
        "instance must be a whole number >= 1 (the difficulty order h, 1 = easiest)",
        rows,
        mapping["instance"],
        file,
    )
    out["instance"] = instance.astype(int)
    s = numbers(cells["usefulness"], rows, what="usefulness", column=mapping["usefulness"], file=file)
    refuse((s < 1) | (s > 5), "usefulness must be on the Likert scale 1-5", rows, mapping["usefulness"], file)
    out["usefulness"] = s
    out["loss"] = likert_to_loss(s)

    warnings = []
    # The documented rule for one time column that timed both conditions (the published study's shape).
    if (
        "solve_time_s" not in mapping
        and "prompt_time_s" in mapping
        and ((cells["prompt_time_s"] != "") & ~with_model).any()
    ):
        mapping["solve_time_s"] = mapping["prompt_time_s"]
        warnings.append(
            f"column '{mapping['prompt_time_s']}' is read per condition: prompt time (D_H + W_H) on "
            f"'{with_label}' rows, solving time (G_H) on '{without_label}' rows, as no column is "
            "mapped to solve_time_s"
        )
    for role in TIMES:
        own, other = (with_label, without_label) if role in WITH_TIMES else (without_label, with_label)
        out[role] = (
            _time_values(role, df, mapping, with_model, (own, other), rows, file)
            if role in mapping
            else np.full(len(out), np.nan)
        )
    external = np.full(len(out), np.nan)
    if "external_loss" in mapping:
        external = numbers(
            cells["external_loss"], rows, what="external_loss", column=mapping["external_loss"], file=file
        )
        refuse((external < 0) | (external > 1), "external_loss must be in [0, 1]", rows, mapping["external_loss"], file)
    out["external_loss"] = external
    return warnings


def _condition_labels(conditions: np.ndarray, with_label: str | None, column: str, file: str) -> tuple[str, str]:
    """The with-model and the without-model label of the study's two conditions.

    Raises
    ------
    FormatError
        Not exactly two condition labels.
    SettingsError
        A ``with_label`` that is not one of them.
    """
    labels = list(pd.unique(conditions))
    if len(labels) != 2:
        shown = ", ".join(f"'{v}'" for v in labels[:10])
        raise FormatError(
            f"the study needs exactly two conditions (with and without the model), found {len(labels)}: {shown}",
            file=file,
            column=column,
        )
    if with_label is None:
        with_label = guess_with_label(labels)
    elif with_label not in labels:
        raise SettingsError(
            f"with-model label '{with_label}' is not a condition; the conditions are '{labels[0]}' and '{labels[1]}'"
        )
    without_label = next(v for v in labels if v != with_label)
    return with_label, without_label


def _time_values(
    role: str,
    df: pd.DataFrame,
    mapping: Mapping[str, str],
    with_model: np.ndarray,
    labels: tuple[str, str],
    rows: np.ndarray,
    file: str,
) -> np.ndarray:
    """The seconds of one time role (mapped), NaN where blank; ``labels`` = (its condition, the other).

    Raises
    ------
    FormatError
        A negative or non-numeric time, or a time filled on the other condition's rows.
    """
    own, other = labels
    col = mapping[role]
    wrong = ~with_model if role in WITH_TIMES else with_model
    # One column mapped to a time of each condition (e.g. prompt and solving time in one "time"
    # column): each role reads its own condition's rows.
    per_condition = col in {mapping[r] for r in (WITHOUT_TIMES if role in WITH_TIMES else WITH_TIMES) if r in mapping}
    values = numbers(
        np.where(wrong, "", text(df[col])) if per_condition else text(df[col]), rows, what=role, column=col, file=file
    )
    refuse(values < 0, f"{role} must be >= 0 seconds", rows, col, file)
    hint = {
        "prompt_time_s": "; or, if it holds the solving time there, map solve_time_s to it too",
        "solve_time_s": "; or, if it holds the prompt time there, map prompt_time_s to it too",
    }.get(role, "")
    refuse(
        wrong & ~np.isnan(values),
        f"{role} only applies to condition '{own}' but is filled on '{other}' rows; leave those cells blank{hint}",
        rows,
        col,
        file,
    )
    return values


def _add_covariate(
    out: pd.DataFrame,
    df: pd.DataFrame,
    mapping: Mapping[str, str],
    col: str,
    order: Sequence[str] | None,
    rows: np.ndarray,
    file: str,
) -> None:
    """Add covariate ``col`` of the user's table ``df`` to ``out`` (:func:`_covariate`), checked to be
    constant per participant.

    Raises
    ------
    FormatError
        The column is not in the file, is not numeric or not in its order, or changes within a participant.
    SettingsError
        The column is mapped to a role or has the name of a study column.
    """
    if col not in df.columns:
        raise FormatError(f"covariate column '{col}' is not in the file", file=file, column=col)
    if col in CANONICAL or col in mapping.values():
        raise SettingsError(
            f"covariate column '{col}' is mapped to a role or clashes with a study column name; "
            "rename it in the file to use it as a covariate"
        )
    out[col] = _covariate(text(df[col]), order, rows, col, file)
    per_participant = out.groupby("participant")[col].nunique(dropna=True)
    changing = per_participant.index[per_participant > 1]
    refuse(
        out["participant"].isin(changing).to_numpy(),
        f"covariate '{col}' describes a participant and must not change between their rows "
        f"(participant{'s' if len(changing) > 1 else ''} {', '.join(map(str, changing[:5]))})",
        rows,
        col,
        file,
    )


def _covariate(cells: np.ndarray, order: Sequence[str] | None, rows: np.ndarray, column: str, file: str) -> np.ndarray:
    """Numeric covariates as floats; ordered text as 0, 1, ... (case-insensitive); blank = NaN."""
    filled = cells != ""
    if order is None:
        parsed = pd.to_numeric(pd.Series(cells[filled], dtype=object), errors="coerce")
        if parsed.isna().any():
            shown = ", ".join(sorted({str(v) for v in cells[filled][parsed.isna().to_numpy()]})[:6])
            raise FormatError(
                f"covariate has text values ({shown}); give their order, e.g. {column}=LOW<...<HIGH",
                file=file,
                column=column,
            )
        return numbers(cells, rows, what=f"covariate '{column}'", column=column, file=file)
    codes = {str(v).lower(): float(i) for i, v in enumerate(order)}
    values = np.array([codes.get(v.lower(), np.nan) if v else np.nan for v in cells])
    unknown = filled & np.isnan(values)
    refuse(unknown, f"value not in the given order {' < '.join(map(str, order))}", rows, column, file)
    return values
